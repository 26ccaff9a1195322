//! The id of a checkpoint object: the SHA-256 of its bytes, written as 64 lowercase hex digits
//! (in the store's paths, the ledger and the store's log), parsed back strictly.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

/// The SHA-256 of an object's bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId([u8; 32]);

impl ObjectId {
    /// The id of `bytes`.
    pub fn of(bytes: &[u8]) -> ObjectId {
        ObjectId(Sha256::digest(bytes).into())
    }

    pub(crate) fn from_raw(raw: [u8; 32]) -> ObjectId {
        ObjectId(raw)
    }

    pub(crate) fn raw(&self) -> &[u8; 32] {
        &self.0
    }

    /// The id of contents git stores as the blob `sha1`: twelve zero bytes, then the blob's id
    /// (no SHA-256 of real bytes starts with 96 zero bits). The bytes are read from git's store.
    pub(crate) fn git(sha1: [u8; 20]) -> ObjectId {
        let mut raw = [0u8; 32];
        if let Some(tail) = raw.get_mut(12..) {
            tail.copy_from_slice(&sha1);
        }
        ObjectId(raw)
    }

    /// The git blob this id names, if it names one.
    pub(crate) fn git_blob(&self) -> Option<[u8; 20]> {
        let (head, tail) = self.0.split_at(12);
        if head.iter().any(|&b| b != 0) {
            return None;
        }
        tail.try_into().ok()
    }

    /// The id git gives `bytes` as a blob.
    pub(crate) fn git_of(bytes: &[u8]) -> ObjectId {
        use sha1::Sha1;
        let mut h = Sha1::new();
        h.update(format!("blob {}\0", bytes.len()).as_bytes());
        h.update(bytes);
        ObjectId::git(h.finalize().into())
    }

    /// Whether `bytes` are the contents this id names (of either kind).
    pub(crate) fn names(&self, bytes: &[u8]) -> bool {
        match self.git_blob() {
            Some(_) => ObjectId::git_of(bytes) == *self,
            None => ObjectId::of(bytes) == *self,
        }
    }

    /// The 64 lowercase hex digits.
    pub fn hex(&self) -> String {
        let mut s = String::with_capacity(64);
        for b in self.0 {
            s.push(hex_digit(b >> 4));
            s.push(hex_digit(b & 0xf));
        }
        s
    }
}

fn hex_digit(n: u8) -> char {
    char::from(
        b"0123456789abcdef"
            .get(usize::from(n))
            .copied()
            .unwrap_or(b'0'),
    )
}

/// A string that is not 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a checkpoint id (64 hex digits): {0:?}")]
pub struct BadObjectId(pub String);

impl FromStr for ObjectId {
    type Err = BadObjectId;

    fn from_str(s: &str) -> Result<ObjectId, BadObjectId> {
        let bad = || BadObjectId(s.chars().take(80).collect());
        let digits = s.as_bytes();
        if digits.len() != 64 {
            return Err(bad());
        }
        let mut raw = [0u8; 32];
        for (out, pair) in raw.iter_mut().zip(digits.chunks_exact(2)) {
            let hi = pair.first().and_then(|&c| hex_value(c)).ok_or_else(bad)?;
            let lo = pair.get(1).and_then(|&c| hex_value(c)).ok_or_else(bad)?;
            *out = (hi << 4) | lo;
        }
        Ok(ObjectId(raw))
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectId({})", self.hex().get(..12).unwrap_or_default())
    }
}

impl Serialize for ObjectId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.hex())
    }
}

impl<'de> Deserialize<'de> for ObjectId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ObjectId, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
