//! Which procedures a message triggers (public for the benchmark that times
//! it): their trigger patterns, all at once
//! in one `RegexSet` (linear time, so no pattern can stall a turn), and their
//! meaning against the message's vector. A matcher is built from an agent's
//! serving procedures and kept until the tenant's procedures change (the
//! store's revision says when), so a turn pays only for matching.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use octopus_core::procedure::{MatchedBy, ServingProcedure};
use octopus_core::{AgentId, Error as DomainError, TenantId};
use regex::RegexBuilder;
use regex_automata::{Input, MatchKind, PatternSet, meta};

/// Compiled size a trigger pattern may take; a larger one is refused.
const PATTERN_SIZE_LIMIT: usize = 256 * 1024;
/// Matchers kept at once; past it the cache starts again.
const CACHED_MATCHERS: usize = 10_000;

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

/// One automaton for every pattern, without a literal prefilter (with one,
/// 10k case-insensitive patterns took 13 s to compile instead of 0.3 s, and
/// matched no faster). `None` when there are none, or they do not compile.
fn compile_set(patterns: &[String]) -> Option<meta::Regex> {
    if patterns.is_empty() {
        return None;
    }
    meta::Builder::new()
        .configure(
            meta::Config::new()
                // Every pattern that matches anywhere, as `RegexSet` reports
                // them: leftmost-first (the default) stops at the first.
                .match_kind(MatchKind::All)
                .auto_prefilter(false)
                .nfa_size_limit(Some(
                    PATTERN_SIZE_LIMIT
                        .saturating_mul(patterns.len())
                        .min(1 << 30),
                ))
                .hybrid_cache_capacity(64 << 20),
        )
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
                let score = f64::from(octopus_vector::dot(candidate, vector));
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

/// A matcher, with the tenant's procedure revision it was built at.
type Built = (u64, Arc<ProcedureMatcher>);

/// Matchers by (tenant, agent).
#[derive(Default)]
pub struct MatcherCache(Mutex<HashMap<(TenantId, AgentId), Built>>);

impl MatcherCache {
    pub fn get(&self, key: (TenantId, AgentId), revision: u64) -> Option<Arc<ProcedureMatcher>> {
        let cache = self.0.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .get(&key)
            .filter(|(built_at, _)| *built_at == revision)
            .map(|(_, matcher)| Arc::clone(matcher))
    }

    pub fn put(&self, key: (TenantId, AgentId), revision: u64, matcher: Arc<ProcedureMatcher>) {
        let mut cache = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= CACHED_MATCHERS {
            cache.clear();
        }
        cache.insert(key, (revision, matcher));
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
