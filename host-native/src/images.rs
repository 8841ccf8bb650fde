//! Image normalisation (SPEC §2.1): every inline image is decoded (bytes
//! that are not an image are refused before the stream starts) and, when it
//! is larger than 2000×2000 px or 3.75 MiB, scaled down and re-encoded: PNG
//! first for PNG sources, then a JPEG quality ladder, then a last resort at
//! 1000 px. Decoding is bounded so that a small file cannot claim gigabytes.

use std::io::Cursor;

use base64::Engine as _;
use iac_agui_core::a2a::Part;
use iac_agui_core::validate::image_part;
use iac_agui_core::{ErrorCode, MessageKey, ProtocolError};
use image::{DynamicImage, ImageFormat, ImageReader, Limits};

/// Largest side kept as is, in pixels.
pub const MAX_SIDE: u32 = 2000;
/// Largest encoded size kept as is (3.75 MiB: 5 MiB of base64).
pub const TARGET_BYTES: usize = 5 * 1024 * 1024 * 3 / 4;
/// JPEG qualities tried in order.
pub const JPEG_LADDER: [u8; 4] = [80, 60, 40, 20];

/// An image ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalisedImage {
    /// Encoded bytes.
    pub bytes: Vec<u8>,
    /// The media type of `bytes` (from the decoded format, not the claim).
    pub media_type: &'static str,
    /// Final width and height.
    pub size: (u32, u32),
}

/// Decodes `raw` and shrinks it when needed.
///
/// # Errors
/// `INVALID_INPUT` "The image data is invalid." when the bytes do not decode
/// (or cannot be brought under the size target).
pub fn normalise(raw: &[u8]) -> Result<NormalisedImage, ProtocolError> {
    let invalid = || ProtocolError::new(ErrorCode::InvalidInput, MessageKey::InvalidImage);
    let mut reader = ImageReader::new(Cursor::new(raw))
        .with_guessed_format()
        .map_err(|_| invalid())?;
    let format = reader.format().ok_or_else(invalid)?;
    let media_type = media_type_of(format).ok_or_else(invalid)?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(20_000);
    limits.max_image_height = Some(20_000);
    limits.max_alloc = Some(512 * 1024 * 1024);
    reader.limits(limits);
    let image = reader.decode().map_err(|_| invalid())?;
    let size = (image.width(), image.height());
    if raw.len() <= TARGET_BYTES && size.0 <= MAX_SIDE && size.1 <= MAX_SIDE {
        return Ok(NormalisedImage {
            bytes: raw.to_vec(),
            media_type,
            size,
        });
    }
    shrink(&image, format).ok_or_else(invalid)
}

/// Whether a part has an image media type ([`normalise_parts`] decodes and
/// checks those).
pub fn is_image(part: &Part) -> bool {
    part.media_type
        .as_deref()
        .is_some_and(|m| m.starts_with("image/"))
}

/// Replaces every image part (`data: {filename, bytes}` with an image media
/// type) by its normalised form; other parts are left alone.
///
/// # Errors
/// The first image that does not decode.
pub fn normalise_parts(parts: &mut [Part]) -> Result<(), ProtocolError> {
    for part in parts.iter_mut() {
        let Some(data) = part.data.as_ref().filter(|_| is_image(part)) else {
            continue;
        };
        let invalid = || ProtocolError::new(ErrorCode::InvalidInput, MessageKey::InvalidImage);
        let filename = data
            .get("filename")
            .and_then(|v| v.as_str())
            .ok_or_else(invalid)?;
        let encoded = data
            .get("bytes")
            .and_then(|v| v.as_str())
            .ok_or_else(invalid)?;
        let raw = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|_| invalid())?;
        let image = normalise(&raw)?;
        *part = image_part(filename, image.media_type, &image.bytes);
    }
    Ok(())
}

fn media_type_of(format: ImageFormat) -> Option<&'static str> {
    match format {
        ImageFormat::Png => Some("image/png"),
        ImageFormat::Jpeg => Some("image/jpeg"),
        ImageFormat::Gif => Some("image/gif"),
        ImageFormat::WebP => Some("image/webp"),
        _ => None,
    }
}

fn shrink(image: &DynamicImage, format: ImageFormat) -> Option<NormalisedImage> {
    let scaled = fit(image, MAX_SIDE);
    if format == ImageFormat::Png {
        if let Some(bytes) = encode_png(&scaled).filter(|b| b.len() <= TARGET_BYTES) {
            return Some(done(bytes, "image/png", &scaled));
        }
    }
    for quality in JPEG_LADDER {
        if let Some(bytes) = encode_jpeg(&scaled, quality).filter(|b| b.len() <= TARGET_BYTES) {
            return Some(done(bytes, "image/jpeg", &scaled));
        }
    }
    let last = fit(image, MAX_SIDE / 2);
    let bytes = encode_jpeg(&last, 20).filter(|b| b.len() <= TARGET_BYTES)?;
    Some(done(bytes, "image/jpeg", &last))
}

fn done(bytes: Vec<u8>, media_type: &'static str, image: &DynamicImage) -> NormalisedImage {
    NormalisedImage {
        bytes,
        media_type,
        size: (image.width(), image.height()),
    }
}

/// Scales proportionally into a `side`×`side` box (never up).
fn fit(image: &DynamicImage, side: u32) -> DynamicImage {
    if image.width() <= side && image.height() <= side {
        return image.clone();
    }
    image.resize(side, side, image::imageops::FilterType::Lanczos3)
}

fn encode_png(image: &DynamicImage) -> Option<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Png).ok()?;
    Some(out.into_inner())
}

fn encode_jpeg(image: &DynamicImage, quality: u8) -> Option<Vec<u8>> {
    let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
    let mut out = Vec::new();
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality);
    rgb.write_with_encoder(encoder).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgb, RgbImage};

    fn png(width: u32, height: u32, noisy: bool) -> Vec<u8> {
        let mut seed = 0x2545_f491_u32;
        let img = RgbImage::from_fn(width, height, |x, y| {
            if noisy {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let [a, b, c, _] = seed.to_le_bytes();
                Rgb([a, b, c])
            } else {
                Rgb([(x % 256) as u8, (y % 256) as u8, 128])
            }
        });
        encode_png(&DynamicImage::ImageRgb8(img)).unwrap()
    }

    #[test]
    fn small_image_passes_unchanged() {
        let raw = png(10, 20, false);
        let out = normalise(&raw).unwrap();
        assert_eq!(out.bytes, raw);
        assert_eq!((out.media_type, out.size), ("image/png", (10, 20)));
    }

    #[test]
    fn garbage_is_invalid_image() {
        for raw in [&b""[..], b"not an image", &png(4, 4, false)[..20]] {
            let err = normalise(raw).unwrap_err();
            assert_eq!(
                (err.code, err.key),
                (ErrorCode::InvalidInput, MessageKey::InvalidImage)
            );
        }
    }

    #[test]
    fn oversized_dimensions_are_scaled_down_keeping_aspect() {
        let out = normalise(&png(2400, 600, false)).unwrap();
        assert_eq!(out.size, (2000, 500));
        assert_eq!(out.media_type, "image/png");
        assert!(out.bytes.len() <= TARGET_BYTES);
        let back = image::load_from_memory(&out.bytes).unwrap();
        assert_eq!((back.width(), back.height()), (2000, 500));
    }

    #[test]
    fn oversized_bytes_fall_back_to_jpeg() {
        // Noise does not compress: a 1200×1200 PNG of noise is ~4.3 MB.
        let raw = png(1200, 1200, true);
        assert!(raw.len() > TARGET_BYTES);
        let out = normalise(&raw).unwrap();
        assert_eq!(out.media_type, "image/jpeg");
        assert!(out.bytes.len() <= TARGET_BYTES);
        assert_eq!(out.size, (1200, 1200));
    }

    #[test]
    fn parts_are_rewritten_with_decoded_type() {
        let mut parts = vec![
            Part::text("hello"),
            image_part("shot.png", "image/jpeg", &png(2100, 100, false)),
        ];
        normalise_parts(&mut parts).unwrap();
        assert_eq!(parts[0], Part::text("hello"));
        assert_eq!(parts[1].media_type.as_deref(), Some("image/png"));
        let data = parts[1].data.as_ref().unwrap();
        assert_eq!(data["filename"], "shot.png");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data["bytes"].as_str().unwrap())
            .unwrap();
        assert_eq!(image::load_from_memory(&bytes).unwrap().width(), 2000);
        let mut bad = vec![image_part("x.png", "image/png", b"nope")];
        assert_eq!(
            normalise_parts(&mut bad).unwrap_err().key,
            MessageKey::InvalidImage
        );
    }
}
