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
