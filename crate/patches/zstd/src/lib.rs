//! The part of `zstd` that parquet's zstd codec uses, over `zstd-safe`. See Cargo.toml for why.

use std::io;

pub use zstd_safe;
pub use zstd_safe::compress_bound;

/// What compressing answers in the wasm build.
pub const UNSUPPORTED: &str = "parquet-skim reads only; zstd compression is not built in";

fn map_error_code(code: usize) -> io::Error {
    io::Error::other(zstd_safe::get_error_name(code).to_string())
}

pub mod bulk {
    use std::io;

    use super::map_error_code;

    /// Decompresses whole frames into a caller's buffer, reusing one context.
    pub struct Decompressor<'a> {
        context: zstd_safe::DCtx<'a>,
    }

    impl Decompressor<'static> {
        pub fn new() -> io::Result<Self> {
            Ok(Self {
                context: zstd_safe::DCtx::create(),
            })
        }
    }

    impl Decompressor<'_> {
        pub fn decompress_to_buffer<C: zstd_safe::WriteBuf + ?Sized>(
            &mut self,
            source: &[u8],
            destination: &mut C,
        ) -> io::Result<usize> {
            self.context
                .decompress(destination, source)
                .map_err(map_error_code)
        }
    }

    /// Compresses whole frames (not on wasm32, where every call fails with
    /// [`io::ErrorKind::Unsupported`] and no compressor is linked).
    pub struct Compressor<'a> {
        #[cfg(not(target_arch = "wasm32"))]
        context: zstd_safe::CCtx<'a>,
        #[cfg(target_arch = "wasm32")]
        context: core::marker::PhantomData<&'a ()>,
    }

    impl Compressor<'static> {
        #[cfg(not(target_arch = "wasm32"))]
        pub fn new(level: i32) -> io::Result<Self> {
            let mut context = zstd_safe::CCtx::create();
            context
                .set_parameter(zstd_safe::CParameter::CompressionLevel(level))
                .map_err(map_error_code)?;
            Ok(Self { context })
        }

        /// Succeeds, so that parquet can build its codec to read; compressing fails.
        #[cfg(target_arch = "wasm32")]
        pub fn new(_level: i32) -> io::Result<Self> {
            Ok(Self {
                context: core::marker::PhantomData,
            })
        }
    }

    impl Compressor<'_> {
        #[cfg(not(target_arch = "wasm32"))]
        pub fn compress_to_buffer<C: zstd_safe::WriteBuf + ?Sized>(
            &mut self,
            source: &[u8],
            destination: &mut C,
        ) -> io::Result<usize> {
            self.context
                .compress2(destination, source)
                .map_err(map_error_code)
        }

        #[cfg(target_arch = "wasm32")]
        pub fn compress_to_buffer<C: zstd_safe::WriteBuf + ?Sized>(
            &mut self,
            _source: &[u8],
            _destination: &mut C,
        ) -> io::Result<usize> {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                super::UNSUPPORTED,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    #[test]
    fn round_trip_on_the_host() {
        let data = b"parquet-skim parquet-skim parquet-skim parquet-skim".repeat(20);
        let mut compressed = Vec::with_capacity(super::compress_bound(data.len()));
        super::bulk::Compressor::new(3)
            .unwrap()
            .compress_to_buffer(&data[..], &mut Cursor::new(&mut compressed))
            .unwrap();
        assert!(compressed.len() < data.len());
        assert_eq!(
            super::zstd_safe::get_frame_content_size(&compressed)
                .ok()
                .flatten(),
            Some(data.len() as u64)
        );
        let mut out = Vec::with_capacity(data.len());
        let n = super::bulk::Decompressor::new()
            .unwrap()
            .decompress_to_buffer(&compressed[..], &mut Cursor::new(&mut out))
            .unwrap();
        assert_eq!(n, data.len());
        assert_eq!(out, data);
    }
}
