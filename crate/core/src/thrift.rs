//! A bounds-checked reader of the thrift compact protocol, for the few fields parquet-skim
//! checks itself: page header sizes (`pages`) and whether a plaintext footer belongs to an
//! encrypted file (`metadata`).
//!
//! arrow-rs keeps its own thrift reader crate-private (parquet 60.1). This one reads what it is
//! asked and skips the rest; it mirrors arrow-rs's leniencies (fields are matched by id whatever
//! their wire type; any field byte whose type nibble is 0 ends a struct), so that it reads a
//! header the way arrow-rs will. Every read returns `None` at the end of the bytes or on a
//! malformed value, never panics, and nesting is bounded.

// Thrift compact protocol type ids.
pub(crate) const BOOL_TRUE: u8 = 1;
pub(crate) const BOOL_FALSE: u8 = 2;
const I8: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;
const UUID: u8 = 13;

/// Nesting deeper than this is not a page header or footer (statistics are two levels deep).
const MAX_DEPTH: u8 = 16;

/// A bounds-checked reader of the thrift compact protocol: every read returns `None` at the end
/// of the bytes or on a malformed value, never panics.
pub(crate) struct Thrift<'a> {
    bytes: &'a [u8],
    /// Bytes read so far.
    pub(crate) pos: usize,
}

impl<'a> Thrift<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    fn take(&mut self, n: usize) -> Option<()> {
        let end = self.pos.checked_add(n)?;
        (end <= self.bytes.len()).then(|| self.pos = end)
    }

    /// ULEB128, at most 10 bytes.
    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// A zigzag varint that fits an i32.
    pub(crate) fn i32(&mut self) -> Option<i32> {
        let v = self.varint()?;
        let v = u32::try_from(v).ok()?;
        Some(((v >> 1) as i32) ^ -((v & 1) as i32))
    }

    /// The next field header: `Some(None)` at the end of the struct (a type of 0, whatever the
    /// high bits, as arrow-rs reads it).
    fn field(&mut self, last: &mut i16) -> Option<Option<(i16, u8)>> {
        let b = self.byte()?;
        if b & 0x0f == 0 {
            return Some(None);
        }
        let kind = b & 0x0f;
        let delta = i16::from(b >> 4);
        let id = if delta == 0 {
            let v = u16::try_from(self.varint()?).ok()?;
            ((v >> 1) as i16) ^ -((v & 1) as i16)
        } else {
            last.checked_add(delta)?
        };
        *last = id;
        Some(Some((id, kind)))
    }

    /// Skips one value of `kind` (a struct field's value: booleans carry no byte).
    fn skip(&mut self, kind: u8, depth: u8) -> Option<()> {
        match kind {
            BOOL_TRUE | BOOL_FALSE => Some(()),
            _ => self.skip_element(kind, depth),
        }
    }

    /// Skips one value of `kind` inside a list, set or map (booleans take a byte).
    fn skip_element(&mut self, kind: u8, depth: u8) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match kind {
            BOOL_TRUE | BOOL_FALSE | I8 => self.take(1),
            I16 | I32 | I64 => self.varint().map(drop),
            DOUBLE => self.take(8),
            UUID => self.take(16),
            BINARY => {
                let n = usize::try_from(self.varint()?).ok()?;
                self.take(n)
            }
            LIST | SET => {
                let b = self.byte()?;
                let n = match b >> 4 {
                    15 => usize::try_from(self.varint()?).ok()?,
                    n => usize::from(n),
                };
                // Every element takes at least one byte: a longer count is garbage.
                if n > self.bytes.len() - self.pos {
                    return None;
                }
                (0..n).try_for_each(|_| self.skip_element(b & 0x0f, depth + 1))
            }
            MAP => {
                let n = usize::try_from(self.varint()?).ok()?;
                if n == 0 {
                    return Some(());
                }
                if n > self.bytes.len() - self.pos {
                    return None;
                }
                let kinds = self.byte()?;
                (0..n).try_for_each(|_| {
                    self.skip_element(kinds >> 4, depth + 1)?;
                    self.skip_element(kinds & 0x0f, depth + 1)
                })
            }
            STRUCT => {
                let mut last = 0i16;
                while let Some((_, kind)) = self.field(&mut last)? {
                    self.skip(kind, depth + 1)?;
                }
                Some(())
            }
            _ => None,
        }
    }

    /// Reads a struct at nesting `depth`: `visit` reads the fields it wants (returning true),
    /// the others are skipped. `Some(true)` once the struct's end is read.
    pub(crate) fn read_struct(
        &mut self,
        depth: u8,
        mut visit: impl FnMut(&mut Self, i16, u8) -> Option<bool>,
    ) -> Option<bool> {
        let mut last = 0i16;
        while let Some((id, kind)) = self.field(&mut last)? {
            if !visit(self, id, kind)? {
                self.skip(kind, depth + 1)?;
            }
        }
        Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_by_id_skips_the_rest_and_never_reads_past_the_end() {
        // {1: i32 -3, 2: binary "ab", 3: list<i32> [1, 2], 4: struct {1: true}} then stop
        let bytes = [
            0x15, 0x05, 0x18, 0x02, b'a', b'b', 0x19, 0x25, 0x02, 0x04, 0x1c, 0x11, 0x00, 0x00,
        ];
        let mut thrift = Thrift::new(&bytes);
        let mut seen = Vec::new();
        let mut first = None;
        let done = thrift.read_struct(0, |t, id, _| {
            seen.push(id);
            Some(match id {
                1 => {
                    first = t.i32();
                    true
                }
                _ => false,
            })
        });
        assert_eq!(
            (done, first, seen, thrift.pos),
            (Some(true), Some(-3), vec![1, 2, 3, 4], 14)
        );
        for cut in 0..bytes.len() {
            let mut thrift = Thrift::new(&bytes[..cut]);
            assert_eq!(
                thrift.read_struct(0, |_, _, _| Some(false)),
                None,
                "cut at {cut}"
            );
        }
    }
}
