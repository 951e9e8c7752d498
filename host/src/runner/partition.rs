//! `--partition`: split a suite's cases into N shards, so N CI machines each run one.
//!
//! - `hash:M/N` puts a case in shard `(u64::from_be_bytes(sha256(name)[0..8]) mod N) + 1`:
//!   a case stays in its shard whatever other cases are added or removed (as nextest's
//!   `hash:`), at the price of shards of uneven size.
//! - `slice:M/N` puts the i-th selected case (0-based, in load order) in shard `(i mod N) + 1`:
//!   shards within one case of each other in size, but adding a case moves others.
//!
//! Either way every case is in exactly one of the N shards.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

/// Most shards a suite can be split into.
pub(crate) const MAX_SHARDS: u32 = 1024;

/// One shard of a partitioned suite: `M/N` with `1 ≤ M ≤ N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// How cases are assigned to shards (`hash:` or `slice:`).
    pub scheme: PartitionScheme,
    /// M: the shard this machine runs, 1-based.
    pub shard: u32,
    /// N: how many shards the suite is split into.
    pub shards: u32,
}

/// How cases are assigned to shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionScheme {
    /// By a hash of the case name: stable as the suite changes.
    Hash,
    /// Round-robin over the selected cases in load order: even sizes.
    Slice,
}

/// Why a `--partition` value is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartitionError {
    /// Not of the form `hash:M/N` or `slice:M/N`; the value given.
    #[error("expected `hash:M/N` or `slice:M/N` (e.g. `hash:1/4`), got `{0}`")]
    Syntax(String),
    /// M or N not a whole number, or not `1 <= M <= N <= 1024`; the value given.
    #[error("`{0}`: M and N must be whole numbers with 1 <= M <= N <= {MAX_SHARDS}")]
    Range(String),
}

impl FromStr for Partition {
    type Err = PartitionError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let syntax = || PartitionError::Syntax(value.to_owned());
        let (scheme, shard) = value.split_once(':').ok_or_else(syntax)?;
        let scheme = match scheme {
            "hash" => PartitionScheme::Hash,
            "slice" => PartitionScheme::Slice,
            _ => return Err(syntax()),
        };
        let (m, n) = shard.split_once('/').ok_or_else(syntax)?;
        let range = || PartitionError::Range(value.to_owned());
        let shard: u32 = m.trim().parse().map_err(|_| range())?;
        let shards: u32 = n.trim().parse().map_err(|_| range())?;
        if shard == 0 || shards > MAX_SHARDS || shard > shards {
            return Err(range());
        }
        Ok(Self {
            scheme,
            shard,
            shards,
        })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match self.scheme {
            PartitionScheme::Hash => "hash",
            PartitionScheme::Slice => "slice",
        };
        write!(f, "{scheme}:{}/{}", self.shard, self.shards)
    }
}

impl Partition {
    /// Keep the items of this shard, in their order; `name` gives an item's case name.
    pub fn select<T>(&self, items: Vec<T>, name: impl Fn(&T) -> &str) -> Vec<T> {
        items
            .into_iter()
            .enumerate()
            .filter(|(index, item)| self.selects(*index, name(item)))
            .map(|(_, item)| item)
            .collect()
    }

    /// Whether the `index`-th selected case (0-based, in load order), named `name`, is in
    /// this shard.
    pub fn selects(&self, index: usize, name: &str) -> bool {
        self.shard_of(index, name) == self.shard
    }

    /// The 1-based shard of the `index`-th selected case named `name`.
    fn shard_of(&self, index: usize, name: &str) -> u32 {
        let n = u64::from(self.shards);
        let slot = match self.scheme {
            PartitionScheme::Hash => name_hash(name) % n,
            PartitionScheme::Slice => index as u64 % n,
        };
        slot as u32 + 1
    }
}

/// The first 8 bytes of the name's SHA-256, big-endian.
fn name_hash(name: &str) -> u64 {
    let digest = Sha256::digest(name.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(value: &str) -> Result<Partition, PartitionError> {
        value.parse()
    }

    #[test]
    fn parses_both_schemes_and_refuses_out_of_range_shards() {
        let p = parse("hash:2/4").expect("valid");
        assert_eq!((p.scheme, p.shard, p.shards), (PartitionScheme::Hash, 2, 4));
        assert_eq!(p.to_string(), "hash:2/4");
        assert_eq!(parse("slice:1/1").expect("valid").to_string(), "slice:1/1");
        for bad in [
            "hash:0/4",
            "hash:5/4",
            "hash:1/0",
            "slice:a/2",
            "hash:1/2000",
        ] {
            assert!(matches!(parse(bad), Err(PartitionError::Range(_))), "{bad}");
        }
        for bad in ["hash", "count:1/2", "hash:1-2", ""] {
            assert!(
                matches!(parse(bad), Err(PartitionError::Syntax(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn every_case_lands_in_exactly_one_shard() {
        let names: Vec<String> = (0..200).map(|i| format!("case-{i}")).collect();
        for scheme in ["hash", "slice"] {
            let mut seen: Vec<String> = Vec::new();
            for m in 1..=7 {
                let p = parse(&format!("{scheme}:{m}/7")).expect("valid");
                seen.extend(p.select(names.clone(), |n| n.as_str()));
            }
            seen.sort();
            let mut all = names.clone();
            all.sort();
            assert_eq!(seen, all, "{scheme}");
        }
    }

    #[test]
    fn hash_shard_of_a_case_does_not_depend_on_the_other_cases() {
        let p = parse("hash:3/5").expect("valid");
        let alone = p.select(vec!["greet"], |n| n);
        let among = p.select(vec!["a", "greet", "b", "c"], |n| n);
        assert_eq!(alone.contains(&"greet"), among.contains(&"greet"));
        // The documented hash: sha256("greet") starts 23 1b f8 9d 72 68 26 89;
        // 0x231bf89d72682689 mod 5 = 0, so shard 1 of 5 and shard 2 of 4.
        assert_eq!(name_hash("greet"), 0x231b_f89d_7268_2689);
        assert_eq!(p.shard_of(99, "greet"), 1);
        assert_eq!(parse("hash:2/4").expect("valid").shard_of(0, "greet"), 2);
    }

    #[test]
    fn slice_is_round_robin_in_load_order() {
        let p = parse("slice:2/3").expect("valid");
        assert_eq!(
            p.select(vec!["a", "b", "c", "d", "e"], |n| n),
            vec!["b", "e"]
        );
    }
}
