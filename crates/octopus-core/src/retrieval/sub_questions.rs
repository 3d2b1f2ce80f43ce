//! Sub-questions: a question that gathers evidence from several
//! conversations ("What activities do Caroline and Melanie both enjoy?") is
//! rewritten by a model into simpler ones, each searched beside it. Only
//! with a model, and only where the operator turns it on: it costs a model
//! call per recall.

use serde::Deserialize;

/// Most sub-questions searched for one question.
pub const MAX_SUB_QUESTIONS: usize = 3;
/// A longer line is not a question but the model talking.
const MAX_SUB_QUESTION_CHARS: usize = 200;

/// What the model is told; the question follows as the user's message.
pub const SUB_QUESTION_INSTRUCTIONS: &str = "You help search a memory of past conversations. \
Rewrite the user's question into at most 3 short, self-contained questions, each about one \
person, one thing or one time, whose answers together answer it. A question that is already \
simple needs none. Answer with one JSON object and nothing else: {\"questions\": [\"...\"]}.";

#[derive(Deserialize)]
struct Answer {
    questions: Vec<String>,
}

/// The sub-questions in a model's answer: the JSON object asked for (found
/// inside any text or code fence around it), or else one question per line
/// that ends with a question mark. Trimmed, without list markers, without
/// the question itself or repeats, at most [`MAX_SUB_QUESTIONS`].
pub fn read_sub_questions(question: &str, answer: &str) -> Vec<String> {
    let from_json = answer
        .find('{')
        .zip(answer.rfind('}'))
        .filter(|(start, end)| start < end)
        .and_then(|(start, end)| serde_json::from_str::<Answer>(&answer[start..=end]).ok())
        .map(|a| a.questions);
    let candidates = from_json.unwrap_or_else(|| {
        answer
            .lines()
            .filter(|line| line.trim_end().ends_with('?'))
            .map(str::to_owned)
            .collect()
    });
    let asked = question.trim().to_lowercase();
    let mut kept: Vec<String> = Vec::new();
    for candidate in candidates {
        let text = candidate
            .trim()
            .trim_start_matches(|c: char| c.is_ascii_digit() || matches!(c, '-' | '*' | '.' | ')'))
            .trim()
            .to_owned();
        let lower = text.to_lowercase();
        let fits = !text.is_empty() && text.chars().count() <= MAX_SUB_QUESTION_CHARS;
        if fits && lower != asked && !kept.iter().any(|k| k.to_lowercase() == lower) {
            kept.push(text);
        }
        if kept.len() == MAX_SUB_QUESTIONS {
            break;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    const QUESTION: &str = "What activities do Caroline and Melanie both enjoy?";

    #[test]
    fn the_json_object_is_read_even_inside_a_fence() {
        let answer = "Sure:\n```json\n{\"questions\": [\"What does Caroline enjoy doing?\", \
                      \"What does Melanie enjoy doing?\"]}\n```";
        assert_eq!(
            read_sub_questions(QUESTION, answer),
            [
                "What does Caroline enjoy doing?",
                "What does Melanie enjoy doing?"
            ]
        );
    }

    #[test]
    fn without_json_each_question_line_counts_and_markers_go() {
        let answer = "Here they are\n1. What does Caroline enjoy?\n- What does Melanie enjoy?\n";
        assert_eq!(
            read_sub_questions(QUESTION, answer),
            ["What does Caroline enjoy?", "What does Melanie enjoy?"]
        );
    }

    #[test]
    fn the_question_itself_repeats_and_long_lines_are_left_out_and_three_kept() {
        let long = format!("{}?", "why ".repeat(60));
        let answer = serde_json::json!({"questions": [
            QUESTION.to_uppercase(), "A?", "a?", long, "B?", "C?", "D?"
        ]})
        .to_string();
        assert_eq!(read_sub_questions(QUESTION, &answer), ["A?", "B?", "C?"]);
    }

    #[test]
    fn an_answer_with_no_question_gives_none() {
        assert!(read_sub_questions(QUESTION, "I cannot help with that.").is_empty());
        assert!(read_sub_questions(QUESTION, "{\"questions\": []}").is_empty());
    }
}
