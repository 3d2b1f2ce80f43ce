//! Who said a message, and whom a query is about.
//!
//! Questions about the past name people ("When did Melanie paint a
//! sunrise?"), and the answer is nearly always in that person's own words:
//! on the LoCoMo dev split, of the evidence turns of questions naming one
//! participant, 449 of 463 were said by that participant. So recall puts the
//! named speaker's turns first (see `service::recall` in the engine).

use crate::message::{Message, Role};

/// Longest speaker label read from the start of a message's text.
const MAX_LABEL_CHARS: usize = 40;
/// Most words in a speaker label ("Mary Ann Smith").
const MAX_LABEL_WORDS: usize = 3;

/// Who said `message`: its `name` when it has one; else the label a
/// transcript puts before the words ("Caroline: I went…"); else, for the
/// user's turns, the user's id. `None` when nothing says.
pub fn speaker_of<'a>(message: &'a Message, user_id: &'a str) -> Option<&'a str> {
    if let Some(name) = message.name.as_deref().filter(|n| !n.trim().is_empty()) {
        return Some(name.trim());
    }
    let labelled = match &message.content {
        Some(crate::message::MessageContent::Text(text)) => transcript_label(text),
        _ => None,
    };
    labelled.or((message.role == Role::User).then_some(user_id))
}

/// The speaker label at the start of `text`: one to three capitalised words
/// followed by a colon and a space, as transcripts write it.
pub(crate) fn transcript_label(text: &str) -> Option<&str> {
    let (head, rest) = text.trim_start().split_once(':')?;
    if head.chars().count() > MAX_LABEL_CHARS || !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let words: Vec<&str> = head.split(' ').collect();
    let is_name = |word: &&str| {
        word.chars().next().is_some_and(char::is_uppercase)
            && word
                .chars()
                .all(|c| c.is_alphabetic() || matches!(c, '\'' | '.' | '-'))
    };
    (words.len() <= MAX_LABEL_WORDS && words.iter().all(is_name)).then_some(head)
}

/// The one speaker among `speakers` that `query` names, as whole words with
/// the name's own capitals; `None` when it names none or several (a question
/// about two people's shared past favours neither).
pub fn the_one_named<'a>(
    query: &str,
    speakers: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut named = speakers.into_iter().filter(|s| names(query, s));
    let first = named.next()?;
    named.all(|other| other == first).then_some(first)
}

/// Whether `query` holds `name` with a word boundary on both sides.
fn names(query: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
    query.match_indices(name).any(|(at, _)| {
        boundary(query[..at].chars().next_back())
            && boundary(query[at + name.len()..].chars().next())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::MessageContent;

    fn said(role: Role, name: Option<&str>, text: &str) -> Message {
        Message {
            id: crate::MessageId::new(),
            episode_id: crate::EpisodeId::new(),
            conversation_id: crate::ConversationId::new(),
            ordinal: 0,
            role,
            content: Some(MessageContent::Text(text.into())),
            name: name.map(str::to_owned),
            tool_call_id: None,
            tool_calls: Vec::new(),
            token_count: 1,
            timestamp: crate::now(),
            agent_id: None,
            contains_pii: false,
            redacted_content: None,
            embedding_ref: None,
            usage: None,
            created_at: crate::now(),
        }
    }

    #[test]
    fn a_speaker_is_the_name_then_the_transcript_label_then_the_user() {
        let user = "u-42";
        let named = said(Role::Assistant, Some("Melanie"), "Caroline: not me");
        assert_eq!(speaker_of(&named, user), Some("Melanie"));
        let labelled = said(Role::Assistant, None, "Mary Ann: I went camping.");
        assert_eq!(speaker_of(&labelled, user), Some("Mary Ann"));
        let plain = said(Role::User, None, "I went camping.");
        assert_eq!(speaker_of(&plain, user), Some("u-42"));
        let assistant = said(Role::Assistant, None, "I went camping.");
        assert_eq!(speaker_of(&assistant, user), None);
    }

    #[test]
    fn only_short_capitalised_labels_before_a_colon_and_space_are_speakers() {
        for text in [
            "note: lower case",
            "Meeting at 10:30 tomorrow",
            "The plan we agreed on last week: go",
            "Caroline:no space",
            "Dr. Who 2: the sequel",
        ] {
            assert_eq!(transcript_label(text), None, "{text}");
        }
        assert_eq!(
            transcript_label("Dr. O'Neil-Smith: hello"),
            Some("Dr. O'Neil-Smith")
        );
    }

    #[test]
    fn a_query_names_one_speaker_only_with_whole_words() {
        let speakers = ["Caroline", "Melanie"];
        let one = |q| the_one_named(q, speakers);
        assert_eq!(one("When did Melanie's kids go camping?"), Some("Melanie"));
        assert_eq!(one("What did Caroline and Melanie do together?"), None);
        assert_eq!(one("What did she say about Carolines?"), None);
        assert_eq!(
            one("what did melanie paint?"),
            None,
            "names keep their capitals"
        );
        assert_eq!(
            the_one_named("Ask Melanie", ["Melanie", "Melanie"]),
            Some("Melanie")
        );
    }
}
