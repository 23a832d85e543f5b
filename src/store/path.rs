//! A trace's path as the store keeps it: module-relative members, in
//! order, head first, each with what its block must still be (size,
//! instruction count, code hash) to be used again (store I2).
//!
//! I1: the key of a path is a hash of the module identities and the
//!     members' offsets, sizes, instruction counts and code hashes, in
//!     order; names and symbols are for people and are not part of it, so
//!     a library found under another file name is the same trace.
//! I2: a path read back is checked before use: at least one member, at
//!     most [`MAX_MEMBERS`], every module index in range, no member twice,
//!     code hashes of 16 hex digits. A row that fails is ignored.

use serde::{Deserialize, Serialize};
use sha2::Digest;

/// Most members of one stored path (`--sb-max-blocks` allows 256).
pub const MAX_MEMBERS: usize = 256;

/// A module a path runs through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleRef {
    /// `build-id:HEX` or `sha256:HEX` (identity.rs).
    pub identity: String,
    /// Its file name (`[vdso]` for the vDSO).
    pub name: String,
}

/// One member block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathMember {
    /// Index into the path's `modules`.
    pub module: u16,
    /// From the module's base (its lowest mapped address).
    pub offset: u64,
    pub size: u32,
    pub insns: u32,
    /// [`code_hash`] of the block's guest bytes.
    pub code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
}

/// A superblock's path, head first (unrolled copies of a loop left out:
/// the run that builds it unrolls it its own way).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TracePath {
    pub modules: Vec<ModuleRef>,
    pub members: Vec<PathMember>,
}

/// The first 16 hex digits of the SHA-256 of a block's guest bytes.
pub fn code_hash(bytes: &[u8]) -> String {
    let d = sha2::Sha256::digest(bytes);
    hex::encode(&d[..8])
}

impl TracePath {
    /// The path's key (I1): 32 hex digits.
    pub fn key(&self) -> String {
        let mut h = sha2::Sha256::new();
        for m in &self.members {
            let module = &self.modules[m.module as usize].identity;
            h.update(module.as_bytes());
            h.update(format!("|{:x}|{}|{}|{}\n", m.offset, m.size, m.insns, m.code).as_bytes());
        }
        hex::encode(&h.finalize()[..16])
    }

    /// The JSON text stored in the `path` column.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a path serialises")
    }

    /// A stored path, checked (I2).
    pub fn from_json(text: &str) -> Result<TracePath, String> {
        let p: TracePath = serde_json::from_str(text).map_err(|e| e.to_string())?;
        p.check()?;
        Ok(p)
    }

    fn check(&self) -> Result<(), String> {
        if self.members.is_empty() || self.members.len() > MAX_MEMBERS {
            return Err(format!("{} members", self.members.len()));
        }
        let mut seen = std::collections::HashSet::new();
        for m in &self.members {
            if m.module as usize >= self.modules.len() {
                return Err(format!("module index {} out of range", m.module));
            }
            if m.code.len() != 16 || !m.code.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("bad code hash {:?}", m.code));
            }
            if m.size == 0 || m.insns == 0 {
                return Err(format!("empty member at offset {:#x}", m.offset));
            }
            if !seen.insert((m.module, m.offset)) {
                return Err(format!("member at offset {:#x} twice", m.offset));
            }
        }
        Ok(())
    }

    /// "name+0xOFF" for member `i` (its symbol when known).
    pub fn describe(&self, i: usize) -> String {
        let m = &self.members[i];
        let module = &self.modules[m.module as usize].name;
        match &m.symbol {
            Some(s) => format!(
                "{module}+{:#x} <{}>",
                m.offset,
                crate::profile::names::display(s)
            ),
            None => format!("{module}+{:#x}", m.offset),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(offsets: &[u64]) -> TracePath {
        TracePath {
            modules: vec![ModuleRef {
                identity: "build-id:ab".into(),
                name: "prog".into(),
            }],
            members: offsets
                .iter()
                .map(|&o| PathMember {
                    module: 0,
                    offset: o,
                    size: 8,
                    insns: 2,
                    code: code_hash(&o.to_le_bytes()),
                    symbol: None,
                })
                .collect(),
        }
    }

    #[test]
    fn keys_follow_the_code_not_the_names() {
        let a = path(&[0x10, 0x20]);
        let mut b = a.clone();
        b.modules[0].name = "other-name".into();
        b.members[0].symbol = Some("main".into());
        assert_eq!(a.key(), b.key());
        assert_ne!(a.key(), path(&[0x20, 0x10]).key(), "order matters");
        let mut c = a.clone();
        c.members[1].code = code_hash(b"changed");
        assert_ne!(a.key(), c.key());
        let mut d = a.clone();
        d.modules[0].identity = "build-id:cd".into();
        assert_ne!(a.key(), d.key(), "another build of the module");
        assert_eq!(a.key().len(), 32);
    }

    #[test]
    fn stored_paths_are_checked() {
        let a = path(&[0x10, 0x20]);
        assert_eq!(TracePath::from_json(&a.to_json()).unwrap(), a);
        assert!(TracePath::from_json("{").is_err());
        assert!(TracePath::from_json(&path(&[]).to_json()).is_err());
        assert!(TracePath::from_json(&path(&[0x10, 0x10]).to_json()).is_err());
        let mut bad = a.clone();
        bad.members[1].module = 3;
        assert!(TracePath::from_json(&bad.to_json()).is_err());
        let mut bad = a;
        bad.members[0].code = "xyz".into();
        assert!(TracePath::from_json(&bad.to_json()).is_err());
    }
}
