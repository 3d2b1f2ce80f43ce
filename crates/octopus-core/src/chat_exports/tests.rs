//! The two services' exports read as the fixtures hold them: what is kept,
//! what is left out, and how a file not whole is refused.

use super::*;

const CHATGPT: &str = include_str!("../../tests/fixtures/chat_exports/chatgpt.json");
const CLAUDE: &str = include_str!("../../tests/fixtures/chat_exports/claude.json");

fn said(message: &NewMessage) -> (Role, String) {
    let text = message
        .content
        .as_ref()
        .map(|c| c.text())
        .unwrap_or_default();
    (message.role, text)
}

fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

#[test]
fn a_chatgpt_conversation_is_the_branch_the_user_last_saw() {
    let export = read(ExportFormat::Chatgpt, CHATGPT.as_bytes()).unwrap();
    assert_eq!(export.empty, 1, "the chat with no message");
    assert_eq!(export.conversations.len(), 2);
    let lisbon = &export.conversations[0];
    assert_eq!(lisbon.export_id, "6633a1f0-8c1e-4d7a-9a51-0c2f1b7e5d01");
    assert_eq!(lisbon.title.as_deref(), Some("Lisbon in May"));
    let words: Vec<_> = lisbon.messages.iter().map(said).collect();
    let all = format!("{words:?}");
    assert!(
        !all.contains("Porto"),
        "the regenerated answer is not kept: {all}"
    );
    assert!(
        !all.contains("The tool says"),
        "hidden reasoning is not kept: {all}"
    );
    assert_eq!(words[0].0, Role::System);
    assert!(words[0].1.contains("I am a nurse") && words[0].1.contains("Answer briefly"));
    assert_eq!(words[1].0, Role::User);
    assert!(words[1].1.starts_with("I am planning a trip to Lisbon"));
    assert!(words[2].1.contains("Sintra"));
    // An image with words: both kept, the image as the file it pointed to.
    let Some(MessageContent::Parts(parts)) = &lisbon.messages[3].content else {
        panic!("{:?}", lisbon.messages[3]);
    };
    assert!(parts.iter().any(|part| matches!(part,
        ContentPart::File { file } if file.file_id.as_deref() == Some("file-service://file-HotelBooking1"))));
    assert!(words[3].1.contains("Hotel Avenida from May 10"));
    // The code the model ran is its call to the tool; the output, the tool's message.
    let call = &lisbon.messages[4].tool_calls[0];
    assert_eq!(
        (lisbon.messages[4].role, call.function_name.as_str()),
        (Role::Assistant, "python")
    );
    assert!(
        call.arguments["input"]
            .as_str()
            .unwrap()
            .contains("date(2024, 5, 14)")
    );
    assert_eq!(
        (
            lisbon.messages[5].role,
            lisbon.messages[5].name.as_deref(),
            words[5].1.as_str()
        ),
        (Role::Tool, Some("python"), "4")
    );
    assert_eq!(
        words[6],
        (
            Role::Assistant,
            "That is four nights at Hotel Avenida.".to_owned()
        )
    );
    assert_eq!(words.len(), 7);
    // Messages without a time take the one before's; the first, the conversation's.
    assert_eq!(
        lisbon.messages[0].timestamp,
        Some(at("2024-05-01T10:40:00.250Z"))
    );
    assert_eq!(
        lisbon.messages[1].timestamp,
        Some(at("2024-05-01T10:40:10.500Z"))
    );
    let sourdough = &export.conversations[1];
    assert_eq!(
        sourdough.messages[1].timestamp,
        sourdough.messages[0].timestamp
    );
}

#[test]
fn a_claude_conversation_keeps_attached_words_and_tool_uses() {
    let export = read(ExportFormat::Claude, CLAUDE.as_bytes()).unwrap();
    assert_eq!((export.conversations.len(), export.empty), (2, 0));
    let budget = &export.conversations[0];
    assert_eq!(budget.title.as_deref(), Some("Rent in the budget sheet"));
    let question = &budget.messages[0];
    assert_eq!(question.role, Role::User);
    let text = question.content.as_ref().unwrap().text();
    assert!(
        text.contains("rent column") && text.contains("Attached budget.csv:\nmonth,rent"),
        "{text}"
    );
    let Some(MessageContent::Parts(parts)) = &question.content else {
        panic!()
    };
    let files: Vec<_> = parts
        .iter()
        .filter_map(|part| match part {
            ContentPart::File { file } => file.filename.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(
        files,
        ["apartment.jpg"],
        "a file whose words are kept is not listed twice"
    );
    let answer = &budget.messages[1];
    assert_eq!(answer.role, Role::Assistant);
    assert!(
        !answer
            .content
            .as_ref()
            .unwrap()
            .text()
            .contains("city's average"),
        "thinking is not kept"
    );
    let call = &answer.tool_calls[0];
    assert_eq!(call.function_name, "web_search");
    assert_eq!(
        call.arguments["query"],
        "average rent one bedroom Leipzig 2024"
    );
    assert!(
        call.result
            .as_ref()
            .unwrap()
            .as_str()
            .unwrap()
            .contains("750 EUR")
    );
    assert_eq!(answer.timestamp, Some(at("2024-09-02T08:16:05Z")));
    // An older export: words in `text` alone, and no title.
    let cat = &export.conversations[1];
    assert_eq!(cat.title, None);
    assert_eq!(
        said(&cat.messages[0]),
        (
            Role::User,
            "My cat Miso only eats the salmon kibble. Is that a problem?".into()
        )
    );
}

#[test]
fn a_file_cut_short_is_refused_naming_where() {
    let cut = &CHATGPT[..CHATGPT.len() / 2];
    let error = read(ExportFormat::Chatgpt, cut.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(error.contains("body") && error.contains("line"), "{error}");
}

#[test]
fn a_conversation_of_the_wrong_shape_is_named_by_its_index() {
    let mut conversations: Vec<Value> = serde_json::from_str(CLAUDE).unwrap();
    conversations[1]["chat_messages"][0]["sender"] = Value::Null;
    let error = read_conversations(ExportFormat::Claude, conversations).unwrap_err();
    assert!(error.to_string().contains("conversations[1]"), "{error}");

    let mut conversations: Vec<Value> = serde_json::from_str(CHATGPT).unwrap();
    conversations[0]["current_node"] = "nowhere".into();
    let error = read_conversations(ExportFormat::Chatgpt, conversations).unwrap_err();
    assert!(
        error.to_string().contains("conversations[0].current_node"),
        "{error}"
    );
}

#[test]
fn an_export_of_the_other_service_is_named_as_such() {
    let error = read(ExportFormat::Claude, CHATGPT.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("conversations[0]") && error.contains("chatgpt export"),
        "{error}"
    );
}

#[test]
fn a_branch_that_loops_is_refused() {
    let mut conversations: Vec<Value> = serde_json::from_str(CHATGPT).unwrap();
    conversations[1]["mapping"]["root-2"]["parent"] = "assistant-4".into();
    let error = read_conversations(ExportFormat::Chatgpt, conversations).unwrap_err();
    assert!(error.to_string().contains("its own ancestor"), "{error}");
}
