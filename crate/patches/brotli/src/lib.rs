//! `brotli` for a reader: decoding re-exported from `brotli-decompressor` (the same code the real
//! `brotli` crate re-exports), and an encoder that refuses. parquet-skim never writes Parquet, and
//! the real encoder would cost the browser build ≈0.3 MB of compressed download.

#![cfg_attr(not(feature = "std"), no_std)]

#[cfg(feature = "std")]
pub use brotli_decompressor::reader::{Decompressor, DecompressorCustomIo};
#[cfg(feature = "std")]
pub use brotli_decompressor::writer::{DecompressorWriter, DecompressorWriterCustomIo};
pub use brotli_decompressor::*;

#[cfg(feature = "std")]
pub use encoder::CompressorWriter;

#[cfg(feature = "std")]
mod encoder {
    use std::io::{self, Write};

    /// What writing brotli answers in this build.
    pub const UNSUPPORTED: &str = "parquet-skim reads only; brotli compression is not built in";

    /// The real crate's `CompressorWriter` signature; every write fails with
    /// [`io::ErrorKind::Unsupported`].
    pub struct CompressorWriter<W: Write> {
        inner: W,
    }

    impl<W: Write> CompressorWriter<W> {
        pub fn new(inner: W, _buffer_size: usize, _quality: u32, _lgwin: u32) -> Self {
            Self { inner }
        }

        pub fn get_ref(&self) -> &W {
            &self.inner
        }

        pub fn into_inner(self) -> W {
            self.inner
        }
    }

    impl<W: Write> Write for CompressorWriter<W> {
        fn write(&mut self, _buf: &[u8]) -> io::Result<usize> {
            Err(io::Error::new(io::ErrorKind::Unsupported, UNSUPPORTED))
        }

        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::new(io::ErrorKind::Unsupported, UNSUPPORTED))
        }
    }
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use std::io::{Read, Write};

    #[test]
    fn decodes_and_refuses_to_encode() {
        // "hello" compressed by the reference encoder (quality 11, window 22).
        let compressed = [0x0b, 0x02, 0x80, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x03];
        let mut out = Vec::new();
        super::Decompressor::new(&compressed[..], 4096)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, b"hello");

        let mut sink = Vec::new();
        let mut w = super::CompressorWriter::new(&mut sink, 4096, 1, 22);
        let err = w.write_all(b"x").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::Unsupported);
        assert!(err
            .to_string()
            .contains("brotli compression is not built in"));
    }
}
