//! The LoCoMo conversations (a folder of JSON files, one per conversation:
//! its speakers, dated sessions of turns, and the questions with the ids of
//! their evidence turns), and the project's metric over them: evidence
//! recall@k.

use std::path::Path;

use anyhow::{Context, ensure};
use chrono::{DateTime, NaiveDateTime, Utc};
use serde_json::Value;

pub struct Conversation {
    /// The file's stem, e.g. `26`.
    pub id: String,
    /// The first speaker: imported as the user, the other as the agent's side.
    pub speaker_a: String,
    pub sessions: Vec<Session>,
    pub questions: Vec<Question>,
}

pub struct Session {
    /// When the session happened (the files give no zone; read as UTC).
    pub at: DateTime<Utc>,
    pub turns: Vec<Turn>,
}

pub struct Turn {
    /// `D<session>:<turn>`, what evidence refers to.
    pub dia_id: String,
    pub speaker: String,
    pub text: String,
    /// A caption of an image the speaker shared, when there was one.
    pub image_caption: Option<String>,
}

pub struct Question {
    pub question: String,
    /// 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
    pub category: u8,
    /// Evidence turn ids, with entries holding several ids split apart.
    pub evidence: Vec<String>,
    /// The gold answer (a few are numbers in the file); none for the
    /// adversarial questions.
    pub answer: Option<String>,
}

/// Every conversation file in `dir`, in file-name order.
pub fn load(dir: &Path) -> anyhow::Result<Vec<Conversation>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("read the LoCoMo folder {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let conversations = paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("read {}", path.display()))?;
            let doc: Value =
                serde_json::from_str(&text).with_context(|| format!("parse {}", path.display()))?;
            let id = path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            parse(id, &doc).with_context(|| format!("read the conversation in {}", path.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    ensure!(
        !conversations.is_empty(),
        "no LoCoMo files in {}",
        dir.display()
    );
    Ok(conversations)
}

fn parse(id: String, doc: &Value) -> anyhow::Result<Conversation> {
    // Some copies nest the dialogue under "conversation"; the QA is at the top.
    let dialogue = doc.get("conversation").unwrap_or(doc);
    let text = |v: &Value, field: &str| -> anyhow::Result<String> {
        v[field]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("no `{field}`"))
    };
    let mut sessions = Vec::new();
    for number in 1.. {
        let Some(turns) = dialogue
            .get(format!("session_{number}"))
            .and_then(Value::as_array)
        else {
            break;
        };
        let date = text(dialogue, &format!("session_{number}_date_time"))?;
        let turns = turns
            .iter()
            .map(|turn| {
                Ok(Turn {
                    dia_id: text(turn, "dia_id")?,
                    speaker: text(turn, "speaker")?,
                    text: text(turn, "text")?,
                    image_caption: turn["blip_caption"].as_str().map(str::to_owned),
                })
            })
            .collect::<anyhow::Result<_>>()?;
        sessions.push(Session {
            at: session_time(&date)?,
            turns,
        });
    }
    let questions = doc["qa"]
        .as_array()
        .context("no `qa`")?
        .iter()
        .map(|qa| {
            Ok(Question {
                question: text(qa, "question")?,
                category: qa["category"].as_u64().context("no `category`")? as u8,
                evidence: split_evidence(
                    qa["evidence"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str),
                ),
                answer: match &qa["answer"] {
                    Value::Null => None,
                    Value::String(answer) => Some(answer.clone()),
                    other => Some(other.to_string()),
                },
            })
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(Conversation {
        id,
        speaker_a: text(dialogue, "speaker_a")?,
        sessions,
        questions,
    })
}

/// `"1:56 pm on 8 May, 2023"`.
pub fn session_time(text: &str) -> anyhow::Result<DateTime<Utc>> {
    let parsed = NaiveDateTime::parse_from_str(text.trim(), "%I:%M %p on %d %B, %Y")
        .with_context(|| format!("session date {text:?}"))?;
    Ok(parsed.and_utc())
}

/// Evidence entries, with those holding several ids (`"D8:6; D9:17"`) split.
pub fn split_evidence<'a>(entries: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    entries
        .into_iter()
        .flat_map(|entry| entry.split([';', ',']))
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .collect()
}

/// |evidence ∩ top-k retrieved| / |evidence|; `None` without evidence.
pub fn evidence_recall(evidence: &[String], retrieved: &[String], k: usize) -> Option<f64> {
    if evidence.is_empty() {
        return None;
    }
    let top = &retrieved[..k.min(retrieved.len())];
    let found = evidence.iter().filter(|id| top.contains(id)).count();
    Some(found as f64 / evidence.len() as f64)
}

/// The depths recall is measured at.
pub(crate) const DEPTHS: [usize; 4] = [1, 5, 10, 20];

/// Evidence recall at each of [`DEPTHS`]; `None` for a question without
/// evidence.
pub(crate) fn recall_at_depths(evidence: &[String], retrieved: &[String]) -> Option<[f64; 4]> {
    let mut recall = [0.0; 4];
    for (at, depth) in DEPTHS.iter().enumerate() {
        recall[at] = evidence_recall(evidence, retrieved, *depth)?;
    }
    Some(recall)
}

/// A LoCoMo question category's name, by its number.
pub(crate) fn category_name(category: u8) -> &'static str {
    [
        "",
        "1 multi-hop",
        "2 temporal",
        "3 open-domain",
        "4 single-hop",
    ]
    .get(category as usize)
    .copied()
    .unwrap_or("other")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A conversation in LoCoMo's shape (the dev split's files are of this
    /// form), written here so that the test needs nothing beside the repository.
    fn write_fixture(dir: &Path) {
        let conversation = serde_json::json!({
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! Good to see you!"},
                {"speaker": "Melanie", "dia_id": "D1:2", "text": "Hi! Look at this.",
                 "blip_caption": "a photo of a dog"}
            ],
            "session_2_date_time": "10:04 am on 19 January, 2024",
            "session_2": [
                {"speaker": "Caroline", "dia_id": "D2:1", "text": "I went to a support group."}
            ],
            // Dates of sessions the file does not hold end the reading.
            "session_3_date_time": "9:00 am on 1 March, 2024",
            "qa": [
                {"question": "When did Caroline go to the group?", "category": 2,
                 "evidence": ["D1:2; D2:1"]},
                {"question": "What did Melanie show?", "category": 1, "evidence": ["D1:2"]}
            ]
        });
        std::fs::write(dir.join("26.json"), conversation.to_string()).unwrap();
        std::fs::write(dir.join("README.md"), "not a conversation").unwrap();
    }

    #[test]
    fn reads_conversations_in_the_locomo_shape() {
        let dir = tempfile::tempdir().unwrap();
        write_fixture(dir.path());
        let conversations = load(dir.path()).unwrap();
        assert_eq!(conversations.len(), 1, "only the .json files");
        let first = &conversations[0];
        assert_eq!(
            (first.id.as_str(), first.speaker_a.as_str()),
            ("26", "Caroline")
        );
        assert_eq!(first.sessions.len(), 2);
        assert_eq!(first.sessions[0].turns[1].dia_id, "D1:2");
        assert_eq!(
            first.sessions[0].turns[1].image_caption.as_deref(),
            Some("a photo of a dog")
        );
        assert_eq!(
            first.sessions[0].at.to_rfc3339(),
            "2023-05-08T13:56:00+00:00"
        );
        assert_eq!(first.questions.len(), 2);
        assert_eq!(
            first.questions[0].evidence,
            ["D1:2", "D2:1"],
            "\"D1:2; D2:1\" is two ids"
        );
        assert!(load(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn recall_counts_evidence_in_the_top_k() {
        let evidence = split_evidence(["D1:3", "D2:1, D2:4"]);
        assert_eq!(evidence, ["D1:3", "D2:1", "D2:4"]);
        let retrieved: Vec<String> = ["D2:4", "D9:9", "D1:3", "D2:1"].map(String::from).to_vec();
        assert_eq!(evidence_recall(&evidence, &retrieved, 1), Some(1.0 / 3.0));
        assert_eq!(evidence_recall(&evidence, &retrieved, 3), Some(2.0 / 3.0));
        assert_eq!(evidence_recall(&evidence, &retrieved, 20), Some(1.0));
        assert_eq!(evidence_recall(&[], &retrieved, 10), None);
        assert_eq!(
            session_time("10:04 am on 19 January, 2024")
                .unwrap()
                .to_rfc3339(),
            "2024-01-19T10:04:00+00:00"
        );
    }
}
