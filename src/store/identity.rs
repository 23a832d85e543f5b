//! Identities of programs and modules (store I2): `build-id:HEX` when the
//! image has a GNU build id (the linker's hash of the code: the same for a
//! stripped copy), else `sha256:HEX` of its content — the file for a
//! program or library, the in-memory image for the vDSO.
//!
//! I1: the identity of an image is computed from what was mapped (its
//!     build id, read from its headers when it was mapped) or from its
//!     file as it is now; a file replaced in between gives another
//!     identity, so its traces are not used (and the code hash check of
//!     feed.rs catches the rest).

use std::path::Path;

use sha2::Digest;

use super::{ProgramKey, StoreError};
use crate::images::{ImageKind, ImageRecord};

fn sha256_file(path: &Path) -> Option<String> {
    crate::profile::file_sha256(path).map(|h| format!("sha256:{h}"))
}

/// The identity of the program at `path` with build id `build_id`, and
/// its file name.
pub fn program_key(path: &Path, build_id: Option<&[u8]>) -> Result<ProgramKey, StoreError> {
    let name = path
        .file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy()
        .into_owned();
    let identity = match build_id {
        Some(id) if !id.is_empty() => format!("build-id:{}", hex::encode(id)),
        _ => sha256_file(path)
            .ok_or_else(|| StoreError::Io(format!("cannot read {}", path.display())))?,
    };
    Ok(ProgramKey { identity, name })
}

/// The identity of image `r` (I1), or None when it cannot be known (a
/// file that cannot be read, JIT code).
pub fn module_identity(r: &ImageRecord) -> Option<String> {
    if let Some(id) = r.build_id.as_deref().filter(|id| !id.is_empty()) {
        return Some(format!("build-id:{}", hex::encode(id)));
    }
    match r.kind {
        ImageKind::Vdso => {
            let bytes = crate::guest_mem::read_bytes(r.base, (r.end - r.base) as usize)?;
            Some(format!(
                "sha256:{}",
                hex::encode(sha2::Sha256::digest(&bytes))
            ))
        }
        _ => sha256_file(&r.path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_ids_win_over_content() {
        let exe = std::env::current_exe().unwrap();
        let k = program_key(&exe, Some(&[0xab, 0xcd])).unwrap();
        assert_eq!(k.identity, "build-id:abcd");
        assert_eq!(k.name, exe.file_name().unwrap().to_string_lossy());
        let k = program_key(&exe, None).unwrap();
        assert!(k.identity.starts_with("sha256:") && k.identity.len() == 7 + 64);
        assert!(program_key(Path::new("/nonexistent/x"), None).is_err());
    }
}
