//! A ClickBench-`hits`-like table: web analytics events, string-heavy, with the skew of the real
//! thing, generated (never downloaded) from a fixed seed.
//!
//! What matters for a reader is kept from the real `hits`: rows are sorted by `CounterID` (the
//! site) then time, so each site's URLs and titles sit together; site popularity is Zipfian, so a
//! few sites hold most rows; `URL`, `Title` and `Referer` are long, high-cardinality strings;
//! `SearchPhrase` is mostly empty. Search-engine names occur in URLs the way they do on the web:
//! the search sites' own pages (clustered) and `utm_source=` tags on others (scattered).
//!
//! Columns: `WatchID`, `CounterID`, `EventDate`, `EventTime`, `UserID`, `RegionID`, `IsMobile`,
//! `ResolutionWidth`, `URL`, `Title`, `Referer`, `SearchPhrase`.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Date32Array, Int16Array, Int32Array, Int64Array, RecordBatch,
    StringArray, TimestampSecondArray,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

/// Sites; the first few are the portals and search engines that dominate real traffic.
const SITES: usize = 2_000;
const PORTALS: [(&str, &str); 8] = [
    ("yandex.ru", "Яндекс"),
    ("avito.ru", "Авито"),
    ("mail.ru", "Почта Mail.Ru"),
    ("google.ru", "Google"),
    ("auto.ru", "Авто.ру"),
    ("kinopoisk.ru", "КиноПоиск"),
    ("livejournal.com", "LiveJournal"),
    ("wikipedia.org", "Википедия"),
];
const WORDS: [&str; 48] = [
    "news",
    "weather",
    "cars",
    "moscow",
    "sale",
    "photo",
    "video",
    "music",
    "games",
    "online",
    "free",
    "download",
    "review",
    "price",
    "buy",
    "rent",
    "apartment",
    "job",
    "travel",
    "hotel",
    "tickets",
    "football",
    "hockey",
    "recipes",
    "health",
    "kids",
    "fashion",
    "phone",
    "laptop",
    "tv",
    "series",
    "movie",
    "book",
    "school",
    "bank",
    "credit",
    "insurance",
    "repair",
    "garden",
    "dacha",
    "fishing",
    "hunting",
    "dogs",
    "cats",
    "map",
    "metro",
    "taxi",
    "forum",
];
const SECTIONS: [&str; 10] = [
    "catalog",
    "item",
    "news",
    "search",
    "user",
    "forum/thread",
    "category",
    "page",
    "article",
    "list",
];

/// A xorshift64* generator: deterministic, no dependencies.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.next() % 1000 < per_mille
    }
    fn word(&mut self) -> &'static str {
        WORDS[self.below(WORDS.len())]
    }
}

/// Samples `0..n` with probability ∝ 1/(i+1)^s, by inverse CDF over a table.
struct Zipf(Vec<f64>);

impl Zipf {
    fn new(n: usize, s: f64) -> Self {
        let mut cdf = Vec::with_capacity(n);
        let mut total = 0.0;
        for i in 0..n {
            total += 1.0 / ((i + 1) as f64).powf(s);
            cdf.push(total);
        }
        Self(cdf.into_iter().map(|c| c / total).collect())
    }
    fn sample(&self, rng: &mut Rng) -> usize {
        let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        self.0.partition_point(|&c| c < u).min(self.0.len() - 1)
    }
}

/// The schema of the table.
pub fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("WatchID", DataType::Int64, false),
        Field::new("CounterID", DataType::Int32, false),
        Field::new("EventDate", DataType::Date32, false),
        Field::new(
            "EventTime",
            DataType::Timestamp(TimeUnit::Second, None),
            false,
        ),
        Field::new("UserID", DataType::Int64, false),
        Field::new("RegionID", DataType::Int32, false),
        Field::new("IsMobile", DataType::Boolean, false),
        Field::new("ResolutionWidth", DataType::Int16, false),
        Field::new("URL", DataType::Utf8, false),
        Field::new("Title", DataType::Utf8, false),
        Field::new("Referer", DataType::Utf8, false),
        Field::new("SearchPhrase", DataType::Utf8, false),
    ]))
}

fn domain(site: usize) -> String {
    match PORTALS.get(site) {
        Some((domain, _)) => (*domain).to_string(),
        None => format!(
            "{}-{}{site}.ru",
            WORDS[site % WORDS.len()],
            WORDS[(site / 7) % WORDS.len()]
        ),
    }
}

fn site_name(site: usize) -> String {
    match PORTALS.get(site) {
        Some((_, name)) => (*name).to_string(),
        None => {
            let w = WORDS[site % WORDS.len()];
            format!("{}{} {site}", w[..1].to_uppercase(), &w[1..])
        }
    }
}

/// An event's URL, title, referer and search phrase on `site` (drawn from `rng` in this order).
fn texts(rng: &mut Rng, popularity: &Zipf, site: usize) -> [String; 4] {
    let (a, b) = (rng.word(), rng.word());
    let section = SECTIONS[rng.below(SECTIONS.len())];
    let host = domain(site);
    let mut u = format!(
        "https://{host}/{section}/{a}-{b}-{}.html",
        rng.below(1_000_000)
    );
    let searched = rng.chance(150);
    let q = format!("{a} {b}");
    if rng.chance(300) {
        u.push_str(&format!("?page={}&sort={}", rng.below(50), rng.word()));
    }
    let tag = match rng.below(1000) {
        0..=14 => "utm_source=google&utm_medium=cpc",
        15..=59 => "utm_source=yandex&utm_medium=cpc",
        60..=79 => "utm_source=vk",
        _ => "",
    };
    if !tag.is_empty() {
        u.push(if u.contains('?') { '&' } else { '?' });
        u.push_str(tag);
    }
    let title = format!(
        "{} {} — {} — {}",
        a[..1].to_uppercase() + &a[1..],
        b,
        section.replace('/', " "),
        site_name(site)
    );
    let referer = match rng.below(100) {
        0..=44 => String::new(),
        45..=59 => format!("https://www.google.ru/search?q={a}+{b}"),
        60..=79 => format!("https://yandex.ru/search/?text={a}%20{b}"),
        _ => format!("https://{}/{}", domain(popularity.sample(rng)), rng.word()),
    };
    let phrase = if searched { q } else { String::new() };
    [u, title, referer, phrase]
}

/// `rows` events, in batches of `batch_rows`, sorted by site then time.
pub fn batches(rows: usize, batch_rows: usize) -> impl Iterator<Item = RecordBatch> {
    // Rows per site: Zipfian popularity, then laid out site by site.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let popularity = Zipf::new(SITES, 1.05);
    let mut per_site = vec![0usize; SITES];
    for _ in 0..rows {
        per_site[popularity.sample(&mut rng)] += 1;
    }
    let sites: Vec<usize> = per_site
        .iter()
        .enumerate()
        .flat_map(|(site, &n)| std::iter::repeat_n(site, n))
        .collect();
    let regions = Zipf::new(500, 1.2);
    let mut row = 0usize;
    std::iter::from_fn(move || {
        if row >= rows {
            return None;
        }
        let n = batch_rows.min(rows - row);
        let mut watch = Vec::with_capacity(n);
        let mut counter = Vec::with_capacity(n);
        let mut date = Vec::with_capacity(n);
        let mut time = Vec::with_capacity(n);
        let mut user = Vec::with_capacity(n);
        let mut region = Vec::with_capacity(n);
        let mut mobile = Vec::with_capacity(n);
        let mut width = Vec::with_capacity(n);
        let mut url = Vec::with_capacity(n);
        let mut title = Vec::with_capacity(n);
        let mut referer = Vec::with_capacity(n);
        let mut phrase = Vec::with_capacity(n);
        // 2013-07-01 .. 2013-07-31, time increasing within each site.
        const JULY_1_2013: i32 = 15_887;
        for (i, &site) in sites.iter().enumerate().skip(row).take(n) {
            let day = ((i * 31) / rows.max(1)) as i32 % 31;
            watch.push((rng.next() >> 1) as i64);
            counter.push(site as i32 + 1);
            date.push(JULY_1_2013 + day);
            time.push(i64::from(JULY_1_2013 + day) * 86_400 + rng.below(86_400) as i64);
            user.push((rng.next() % 5_000_000) as i64 * 1_000_003);
            region.push(regions.sample(&mut rng) as i32 + 1);
            let is_mobile = rng.chance(120);
            mobile.push(is_mobile);
            width.push(if is_mobile {
                [360, 375, 414][rng.below(3)]
            } else {
                [1366, 1920, 1280, 1536][rng.below(4)]
            });
            let [u, t, r, p] = texts(&mut rng, &popularity, site);
            url.push(u);
            title.push(t);
            referer.push(r);
            phrase.push(p);
        }
        row += n;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(watch)),
            Arc::new(Int32Array::from(counter)),
            Arc::new(Date32Array::from(date)),
            Arc::new(TimestampSecondArray::from(time)),
            Arc::new(Int64Array::from(user)),
            Arc::new(Int32Array::from(region)),
            Arc::new(BooleanArray::from(mobile)),
            Arc::new(Int16Array::from(width)),
            Arc::new(StringArray::from(url)),
            Arc::new(StringArray::from(title)),
            Arc::new(StringArray::from(referer)),
            Arc::new(StringArray::from(phrase)),
        ];
        RecordBatch::try_new(schema(), columns).ok()
    })
}
