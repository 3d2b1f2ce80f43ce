//! Which procedures a message triggers (public for the benchmark that times
//! it): their trigger patterns, all at once
//! in one `RegexSet` (linear time, so no pattern can stall a turn), and their
//! meaning against the message's vector. A matcher is built from an agent's
//! serving procedures and kept until the tenant's procedures change (the
//! store's revision says when), so a turn pays only for matching.
//!
//! What a matcher may hold is bounded twice: each tenant's trigger patterns
//! by their compiled size ([`compiled_size`], against the tenant's quota
//! when a pattern would serve), and the cache of matchers by the bytes they
//! hold, least recently used evicted first, with a large one's memory
//! handed back to the system when it goes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use octopus_core::procedure::{MatchedBy, ServingProcedure};
use octopus_core::{AgentId, Error as DomainError, TenantId};
use regex::RegexBuilder;
use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::{Input, MatchKind, PatternSet, meta};

/// Compiled size a trigger pattern may take; a larger one is refused.
const PATTERN_SIZE_LIMIT: usize = 256 * 1024;
/// Bytes the cached matchers may hold in all.
pub const MATCHER_CACHE_BYTES: usize = 256 << 20;
/// A matcher this large hands its memory back to the system when it leaves
/// the cache.
const LARGE_MATCHER_BYTES: usize = 4 << 20;
/// The lazy DFA's cache of one search thread, per matcher, grows as
/// messages need states, up to a capacity set by the number of patterns:
/// this much per pattern, within the bounds below. Too small a cache for
/// many patterns makes the lazy DFA give up for a slower engine (10k
/// patterns: 7.7 ms a message with 8 MiB, 0.14 µs with 64 MiB).
const LAZY_DFA_BYTES_PER_PATTERN: usize = 64 << 10;
const LAZY_DFA_MIN_BYTES: usize = 2 << 20;
const LAZY_DFA_MAX_BYTES: usize = 64 << 20;
/// Threads that search one matcher at once, each with its own cache (the
/// server's runtime has a worker per core; two here).
const SEARCHING_THREADS: usize = 2;

/// Compiles a trigger pattern as matching will, or says why it cannot be.
pub fn check_pattern(pattern: &str) -> Result<(), DomainError> {
    RegexBuilder::new(pattern)
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .map(|_| ())
        .map_err(|error| {
            DomainError::invalid("trigger_pattern", format!("not a usable pattern: {error}"))
        })
}

/// The memory a trigger pattern takes in a matcher, compiled as a matcher
/// compiles it; or why it cannot be compiled.
pub fn compiled_size(pattern: &str) -> Result<usize, DomainError> {
    check_pattern(pattern)?;
    meta::Builder::new()
        .configure(set_config(PATTERN_SIZE_LIMIT, LAZY_DFA_MIN_BYTES))
        .build(pattern)
        .map(|regex| regex.memory_usage())
        .map_err(|error| {
            DomainError::invalid("trigger_pattern", format!("not a usable pattern: {error}"))
        })
}

/// One agent's serving procedures, ready to match.
pub struct ProcedureMatcher {
    pub procedures: Vec<ServingProcedure>,
    patterns: Option<meta::Regex>,
    /// The procedure of each pattern in `patterns`.
    pattern_owner: Vec<usize>,
    /// Unit vectors, one after another, and the procedure of each.
    vectors: Vec<f32>,
    vector_owner: Vec<usize>,
    dimension: usize,
}

fn set_config(nfa_size_limit: usize, lazy_dfa_bytes: usize) -> meta::Config {
    meta::Config::new()
        // Every pattern that matches anywhere, as `RegexSet` reports them:
        // leftmost-first (the default) stops at the first.
        .match_kind(MatchKind::All)
        .auto_prefilter(false)
        // Which patterns match is all a turn asks; without capture slots a
        // fallback engine's state is small (with them, 10k patterns made one
        // ask for 88 GB).
        .which_captures(WhichCaptures::None)
        .nfa_size_limit(Some(nfa_size_limit))
        .hybrid_cache_capacity(lazy_dfa_bytes)
}

/// The lazy DFA cache capacity for a set of `patterns` patterns.
fn lazy_dfa_bytes(patterns: usize) -> usize {
    patterns
        .saturating_mul(LAZY_DFA_BYTES_PER_PATTERN)
        .clamp(LAZY_DFA_MIN_BYTES, LAZY_DFA_MAX_BYTES)
}

/// One automaton for every pattern, without a literal prefilter (with one,
/// 10k case-insensitive patterns took 13 s to compile instead of 0.3 s, and
/// matched no faster). `None` when there are none, or they do not compile.
fn compile_set(patterns: &[String]) -> Option<meta::Regex> {
    if patterns.is_empty() {
        return None;
    }
    meta::Builder::new()
        .configure(set_config(
            PATTERN_SIZE_LIMIT
                .saturating_mul(patterns.len())
                .min(1 << 30),
            lazy_dfa_bytes(patterns.len()),
        ))
        .build_many(patterns)
        .map_err(|error| tracing::warn!(%error, "trigger patterns not compiled together"))
        .ok()
}

/// A procedure a message matched: its index in the matcher, how, and score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Found {
    pub index: usize,
    pub matched_by: MatchedBy,
    pub score: f64,
}

impl ProcedureMatcher {
    pub fn build(procedures: Vec<ServingProcedure>) -> Self {
        let mut patterns = Vec::new();
        let mut pattern_owner = Vec::new();
        let mut vectors = Vec::new();
        let mut vector_owner = Vec::new();
        let dimension = procedures
            .iter()
            .find_map(|p| p.embedding.as_ref().map(Vec::len))
            .unwrap_or(0);
        for (index, procedure) in procedures.iter().enumerate() {
            if let Some(pattern) = &procedure.content.trigger_pattern {
                patterns.push(pattern.clone());
                pattern_owner.push(index);
            }
            if let Some(vector) = &procedure.embedding
                && vector.len() == dimension
            {
                vectors.extend_from_slice(vector);
                vector_owner.push(index);
            }
        }
        // Patterns were checked when stored, so they compile together; if one
        // no longer does (a changed limit), only it loses its trigger.
        let mut compiled = compile_set(&patterns);
        if compiled.is_none() && !patterns.is_empty() {
            let usable: Vec<bool> = patterns.iter().map(|p| check_pattern(p).is_ok()).collect();
            let mut keep = usable.iter();
            pattern_owner.retain(|_| keep.next().copied().unwrap_or(false));
            let mut keep = usable.iter();
            patterns.retain(|_| keep.next().copied().unwrap_or(false));
            compiled = compile_set(&patterns);
        }
        let patterns = compiled;
        Self {
            procedures,
            patterns,
            pattern_owner,
            vectors,
            vector_owner,
            dimension,
        }
    }

    /// About the bytes this matcher may hold: its automaton and the search
    /// caches it may grow, vectors and procedures.
    pub fn memory_usage(&self) -> usize {
        let automaton = self.patterns.as_ref().map_or(0, |patterns| {
            patterns.memory_usage() + SEARCHING_THREADS * lazy_dfa_bytes(patterns.pattern_len())
        });
        let procedures: usize = self
            .procedures
            .iter()
            .map(|p| {
                std::mem::size_of::<ServingProcedure>()
                    + p.content.name.len()
                    + p.content.description.as_ref().map_or(0, String::len)
                    + p.content.trigger_pattern.as_ref().map_or(0, String::len)
                    + p.content
                        .steps
                        .iter()
                        .map(|s| s.instruction.len() + 64)
                        .sum::<usize>()
            })
            .sum();
        automaton + self.vectors.len() * 4 + procedures
    }

    /// Whether any procedure could match by meaning (then the message's
    /// vector is worth waiting for).
    pub fn has_vectors(&self) -> bool {
        !self.vector_owner.is_empty()
    }

    /// Procedures whose pattern matches `message`.
    pub fn by_pattern(&self, message: &str) -> Vec<Found> {
        let Some(patterns) = &self.patterns else {
            return Vec::new();
        };
        let mut matched = PatternSet::new(patterns.pattern_len());
        patterns.which_overlapping_matches(&Input::new(message), &mut matched);
        matched
            .iter()
            .map(|i| Found {
                index: self.pattern_owner[i.as_usize()],
                matched_by: MatchedBy::Regex,
                score: 1.0,
            })
            .collect()
    }

    /// Procedures whose meaning is at least `min_score` close to `vector`.
    pub fn by_meaning(&self, vector: &[f32], min_score: f64) -> Vec<Found> {
        if vector.len() != self.dimension || self.dimension == 0 {
            return Vec::new();
        }
        self.vectors
            .chunks_exact(self.dimension)
            .zip(&self.vector_owner)
            .filter_map(|(candidate, &index)| {
                let score = f64::from(octopus_core::vectors::dot(candidate, vector));
                (score >= min_score).then_some(Found {
                    index,
                    matched_by: MatchedBy::Semantic,
                    score,
                })
            })
            .collect()
    }
}

/// The best `top_k` of both kinds of match, one per procedure: a pattern
/// match scores 1 and wins over the same procedure's semantic score.
pub fn best(mut found: Vec<Found>, top_k: usize) -> Vec<Found> {
    found.sort_by(|a, b| {
        b.score.total_cmp(&a.score).then_with(|| {
            (a.matched_by != MatchedBy::Regex).cmp(&(b.matched_by != MatchedBy::Regex))
        })
    });
    let mut seen = std::collections::HashSet::new();
    found.retain(|f| seen.insert(f.index));
    found.truncate(top_k);
    found
}

/// A cached matcher: the tenant's procedure revision it was built at, its
/// bytes, and when it was last used (a counter).
struct Cached {
    revision: u64,
    matcher: Arc<ProcedureMatcher>,
    bytes: usize,
    used: u64,
}

/// Matchers by (tenant, agent), within a budget of bytes.
pub struct MatcherCache {
    budget: usize,
    state: Mutex<CacheState>,
}

#[derive(Default)]
struct CacheState {
    entries: HashMap<(TenantId, AgentId), Cached>,
    bytes: usize,
    clock: u64,
}

impl Default for MatcherCache {
    fn default() -> Self {
        Self::with_budget(MATCHER_CACHE_BYTES)
    }
}

impl MatcherCache {
    pub fn with_budget(budget: usize) -> Self {
        Self {
            budget,
            state: Mutex::default(),
        }
    }

    pub fn get(&self, key: (TenantId, AgentId), revision: u64) -> Option<Arc<ProcedureMatcher>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.clock += 1;
        let now = state.clock;
        let cached = state
            .entries
            .get_mut(&key)
            .filter(|c| c.revision == revision)?;
        cached.used = now;
        Some(Arc::clone(&cached.matcher))
    }

    /// Keeps `matcher`, replacing the key's older one; then evicts the least
    /// recently used until the cache fits its budget (a matcher larger than
    /// the whole budget is used but not kept).
    pub fn put(&self, key: (TenantId, AgentId), revision: u64, matcher: Arc<ProcedureMatcher>) {
        let bytes = matcher.memory_usage();
        let mut released = 0;
        {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            state.clock += 1;
            let used = state.clock;
            if let Some(old) = state.entries.remove(&key) {
                state.bytes -= old.bytes;
                released += old.bytes;
            }
            if bytes <= self.budget {
                state.entries.insert(
                    key,
                    Cached {
                        revision,
                        matcher,
                        bytes,
                        used,
                    },
                );
                state.bytes += bytes;
            }
            while state.bytes > self.budget {
                let Some(oldest) = state
                    .entries
                    .iter()
                    .min_by_key(|(_, c)| c.used)
                    .map(|(k, _)| *k)
                else {
                    break;
                };
                if let Some(evicted) = state.entries.remove(&oldest) {
                    state.bytes -= evicted.bytes;
                    released += evicted.bytes;
                }
            }
        }
        if released >= LARGE_MATCHER_BYTES {
            // The allocator keeps large freed blocks; a replaced matcher of
            // many patterns would otherwise stay resident.
            crate::free_memory::release();
        }
    }

    /// The bytes the cached matchers hold.
    pub fn bytes(&self) -> usize {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use octopus_core::ProcedureId;
    use octopus_core::procedure::{ProcedureContent, ProcedureStep};

    fn serving(name: &str, pattern: Option<&str>, vector: Option<Vec<f32>>) -> ServingProcedure {
        ServingProcedure {
            id: ProcedureId::new(),
            agent_id: None,
            version: 1,
            content: ProcedureContent {
                name: name.into(),
                description: None,
                trigger_pattern: pattern.map(str::to_owned),
                steps: vec![ProcedureStep {
                    instruction: "do".into(),
                    tool: None,
                    arguments: None,
                }],
            },
            embedding: vector,
        }
    }

    #[test]
    fn a_catastrophic_backtracking_pattern_matches_in_linear_time() {
        let matcher = ProcedureMatcher::build(vec![serving("evil", Some("(a+)+$"), None)]);
        let hostile = format!("{}b", "a".repeat(30));
        let started = std::time::Instant::now();
        assert!(matcher.by_pattern(&hostile).is_empty());
        let long = format!("{}b", "a".repeat(100_000));
        assert!(matcher.by_pattern(&long).is_empty());
        // A backtracking engine takes 2^30 steps on the first; this takes
        // microseconds. Generous, so a loaded machine never fails it.
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(matcher.by_pattern(&"a".repeat(30)).len(), 1);
    }

    #[test]
    fn every_pattern_that_matches_is_reported_not_only_the_first() {
        let matcher = ProcedureMatcher::build(vec![
            serving("refund", Some("(?i)refund"), None),
            serving("refund policy", Some("(?i)refund policy"), None),
            serving("policy", Some("policy"), None),
            serving("shipping", Some("shipping"), None),
        ]);
        let mut names: Vec<&str> = matcher
            .by_pattern("What is your refund policy?")
            .iter()
            .map(|f| matcher.procedures[f.index].content.name.as_str())
            .collect();
        names.sort();
        assert_eq!(names, ["policy", "refund", "refund policy"]);
    }

    #[test]
    fn a_pattern_that_no_longer_compiles_loses_only_its_own_trigger() {
        let matcher = ProcedureMatcher::build(vec![
            serving("broken", Some("(unclosed"), None),
            serving("refund", Some("(?i)refund"), None),
        ]);
        let found = matcher.by_pattern("REFUND please");
        assert_eq!(found.len(), 1);
        assert_eq!(matcher.procedures[found[0].index].content.name, "refund");
    }

    #[test]
    fn invalid_and_oversized_patterns_are_refused_with_the_parse_error() {
        let error = check_pattern("(unclosed").unwrap_err().to_string();
        assert!(error.contains("unclosed group"), "{error}");
        let huge = check_pattern(r"\w{1000}\w{1000}\w{1000}")
            .unwrap_err()
            .to_string();
        assert!(huge.contains("size limit"), "{huge}");
        assert!(check_pattern(r"(?i)\brefund\b").is_ok());
    }

    #[test]
    fn compiled_sizes_measure_what_a_pattern_costs() {
        let small = compiled_size(r"(?i)\brefund\b").unwrap();
        let large = compiled_size(r"(?i)N[a-z]{150}[0-9]").unwrap();
        assert!(small < 20_000, "{small}");
        assert!(large > 5 * small, "{large} against {small}");
        assert!(compiled_size("(unclosed").is_err());
    }

    #[test]
    fn the_cache_keeps_within_its_budget_evicting_the_least_recently_used() {
        let matcher = |pattern: &str| {
            Arc::new(ProcedureMatcher::build(vec![serving(
                "p",
                Some(pattern),
                None,
            )]))
        };
        let one = matcher(r"(?i)N[a-z]{150}[0-9]").memory_usage();
        let cache = MatcherCache::with_budget(one * 5 / 2);
        let tenant = TenantId(uuid::Uuid::now_v7());
        let agents: Vec<AgentId> = (0..3).map(|_| AgentId(uuid::Uuid::now_v7())).collect();
        cache.put((tenant, agents[0]), 1, matcher(r"(?i)N[a-z]{150}[0-9]"));
        cache.put((tenant, agents[1]), 1, matcher(r"(?i)M[a-z]{150}[0-9]"));
        assert!(
            cache.get((tenant, agents[0]), 1).is_some(),
            "used: now the newest"
        );
        let third = matcher(r"(?i)P[a-z]{150}[0-9]");
        let third_bytes = third.memory_usage();
        cache.put((tenant, agents[2]), 1, third);
        assert!(cache.bytes() <= one * 5 / 2);
        assert!(
            cache.get((tenant, agents[1]), 1).is_none(),
            "the least recently used went"
        );
        assert!(cache.get((tenant, agents[0]), 1).is_some());
        assert!(cache.get((tenant, agents[2]), 1).is_some());
        assert!(
            cache.get((tenant, agents[0]), 2).is_none(),
            "another revision is stale"
        );
        // A new revision replaces the key's matcher, not adds to it.
        let small = matcher("refund");
        let expected = third_bytes + small.memory_usage();
        cache.put((tenant, agents[0]), 2, small);
        assert_eq!(cache.bytes(), expected);
    }

    #[test]
    fn both_kinds_of_match_one_per_procedure_best_first() {
        let matcher = ProcedureMatcher::build(vec![
            serving("refund", Some(r"(?i)\brefund"), Some(vec![1.0, 0.0])),
            serving("shipping", None, Some(vec![0.6, 0.8])),
            serving("greeting", Some("^hello"), None),
        ]);
        let mut found = matcher.by_pattern("I want a refund");
        found.extend(matcher.by_meaning(&[1.0, 0.0], 0.5));
        let found = best(found, 5);
        let names: Vec<(&str, MatchedBy)> = found
            .iter()
            .map(|f| {
                (
                    matcher.procedures[f.index].content.name.as_str(),
                    f.matched_by,
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("refund", MatchedBy::Regex),
                ("shipping", MatchedBy::Semantic)
            ]
        );
        assert!((found[1].score - 0.6).abs() < 1e-6);
        assert!(
            matcher.by_meaning(&[1.0, 0.0, 0.0], 0.0).is_empty(),
            "another model's vector"
        );
        assert_eq!(best(found, 1).len(), 1);
    }
}
