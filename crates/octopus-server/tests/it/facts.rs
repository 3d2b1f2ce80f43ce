//! Facts over HTTP, learned from a loopback Ollama that scripts its answers
//! (`octopus_testkit::fake_chat`): a close's key facts become facts of the
//! user, a later close replaces one (kept, with the period it held), recall
//! finds them by words and by time, a context shows the current ones in
//! their own block, and forgetting the user erases them.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use octopus_testkit::fake_chat::{self, Answer, ChatProvider};
use serde_json::{Value, json};

use crate::harness::TestServer;

/// Imports one session of three turns on `date` (`YYYY-MM-DD`), in a
/// conversation of its own; returns the report.
async fn import(
    server: &TestServer,
    key: &str,
    agent: &str,
    date: &str,
    turns: [&str; 3],
) -> Value {
    let roles = ["user", "assistant", "user"];
    let messages: Vec<Value> = turns
        .iter()
        .zip(roles)
        .enumerate()
        .map(|(i, (text, role))| {
            json!({"role": role, "content": text, "timestamp": format!("{date}T10:0{i}:00Z")})
        })
        .collect();
    server
        .ok(
            Method::POST,
            "/v1/conversations/import",
            key,
            Some(
                json!({"agent_id": agent, "user_id": "dana", "sessions": [{"messages": messages}]}),
            ),
            StatusCode::CREATED,
        )
        .await
}

async fn facts(server: &TestServer, key: &str, agent: &str, all: bool) -> Vec<Value> {
    let path = format!("/v1/agents/{agent}/users/dana/facts?include_replaced={all}");
    server
        .ok(Method::GET, &path, key, None, StatusCode::OK)
        .await["items"]
        .as_array()
        .unwrap()
        .clone()
}

/// A loopback model whose answers the test scripts, its URL, and a server
/// that may call it and does not retry it.
async fn with_a_scripted_model() -> (Arc<ChatProvider>, String, TestServer) {
    let fake = Arc::new(ChatProvider::default());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    let server = TestServer::with_engine(Default::default(), |engine| {
        engine.llm.max_retries = 0;
        engine.llm.allowed_base_urls = vec![url.clone()];
    })
    .await;
    (fake, url, server)
}

fn texts(facts: &[Value]) -> Vec<&str> {
    facts.iter().map(|f| f["text"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn facts_learned_at_close_are_replaced_recalled_shown_and_forgotten() {
    let (fake, url, server) = with_a_scripted_model().await;
    let (_, key) = server.tenant("acme").await;
    let agent = server
        .ok(
            Method::POST,
            "/v1/agents",
            &key,
            Some(json!({"name": "concierge",
                "llm": {"provider": "ollama", "model": "llama3.2", "base_url": url}})),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // 2023: where Dana lives, and her cat. Nothing known yet: no decision asked.
    fake.then(Answer::text(
        json!({"summary": "Dana lives in Lyon with her cat Miso.",
               "key_facts": ["Dana lives in Lyon", "Dana has a cat named Miso"]})
        .to_string(),
    ));
    let first = import(
        &server,
        &key,
        &agent,
        "2023-03-10",
        [
            "I live in Lyon with my cat Miso",
            "Lovely city!",
            "Yes, Miso loves the balcony",
        ],
    )
    .await;
    server.octopus.run_memory_jobs().await.unwrap();
    let learned = facts(&server, &key, &agent, false).await;
    assert_eq!(texts(&learned).len(), 2, "{learned:?}");
    let lyon = learned
        .iter()
        .find(|f| f["text"] == "Dana lives in Lyon")
        .unwrap()
        .clone();
    assert_eq!(
        lyon["valid_from"], "2023-03-10T10:00:00Z",
        "from the message that said it"
    );
    assert_eq!(lyon["episode_id"], first["episodes"][0]);
    assert_eq!(lyon["message_ids"].as_array().unwrap().len(), 1);
    assert_eq!(fake.received().len(), 1, "the summary only");

    // 2024: she moved. The model is shown her related facts and answers.
    fake.then(Answer::text(
        json!({"summary": "Dana moved to Paris; Miso likes the flat.",
               "key_facts": ["Dana lives in Paris", "Dana has a cat named Miso"]})
        .to_string(),
    ))
    .then(Answer::text(
        "```json\n{\"facts\": [{\"new\": 1, \"action\": \"update\", \"replaces\": 2}, \
         {\"new\": 2, \"action\": \"none\", \"same_as\": 1}]}\n```",
    ));
    import(
        &server,
        &key,
        &agent,
        "2024-06-01",
        [
            "We moved to Paris last month",
            "Paris, how exciting",
            "Miso likes the new flat",
        ],
    )
    .await;
    server.octopus.run_memory_jobs().await.unwrap();
    let asked = fake.received();
    assert_eq!(asked.len(), 3, "a summary, then the decision");
    let decision = asked[2].body.to_string();
    assert!(
        decision.contains(
            "Known facts:\\n1. Dana has a cat named Miso (since 2023-03-10)\\n2. Dana lives in Lyon (since 2023-03-10)"
        ) && decision.contains("New facts:\\n1. Dana lives in Paris\\n2. Dana has a cat named Miso"),
        "{decision}"
    );

    let current = facts(&server, &key, &agent, false).await;
    assert_eq!(
        texts(&current),
        ["Dana lives in Paris", "Dana has a cat named Miso"]
    );
    let all = facts(&server, &key, &agent, true).await;
    assert_eq!(all.len(), 3, "the cat is not learned twice; Lyon is kept");
    let paris = &current[0];
    let lyon = all
        .iter()
        .find(|f| f["text"] == "Dana lives in Lyon")
        .unwrap();
    assert_eq!(paris["valid_from"], "2024-06-01T10:00:00Z");
    assert_eq!(lyon["valid_to"], paris["valid_from"]);
    assert_eq!(lyon["superseded_by"], paris["id"]);

    // "Where did she live in 2023?": the old fact, which held then.
    let recalled = server
        .ok(
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            &key,
            Some(json!({"user_id": "dana", "query": "Where did Dana live?",
                "from": "2023-01-01T00:00:00Z", "to": "2024-01-01T00:00:00Z"})),
            StatusCode::OK,
        )
        .await;
    let hits = recalled["items"].as_array().unwrap();
    let fact_hits: Vec<&Value> = hits.iter().filter(|h| h["kind"] == "fact").collect();
    assert!(!fact_hits.is_empty(), "{recalled}");
    assert!(
        fact_hits
            .iter()
            .all(|h| h["fact"]["text"] != "Dana lives in Paris"),
        "Paris was not yet true in 2023: {fact_hits:?}"
    );
    let old = fact_hits
        .iter()
        .find(|h| h["fact"]["text"] == "Dana lives in Lyon")
        .expect("the replaced fact is recalled for its time");
    assert_eq!(
        old["episode_id"], lyon["episode_id"],
        "it leads back to its turns"
    );
    assert_eq!(old["at"], "2023-03-10T10:00:00Z");

    // What holds now comes first: asked in the present, Paris and the turn
    // that said it lead Lyon and its turn; asked about 2023 or "before",
    // the other way round.
    let order = |question: &'static str| {
        let server = &server;
        let (key, agent) = (&key, &agent);
        async move {
            let recalled = server
                .ok(
                    Method::POST,
                    &format!("/v1/agents/{agent}/recall"),
                    key,
                    Some(json!({"user_id": "dana", "query": question, "top_k": 20})),
                    StatusCode::OK,
                )
                .await;
            let texts: Vec<String> = recalled["items"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|h| {
                    h["fact"]["text"]
                        .as_str()
                        .or(h["window"]["message"]["content"].as_str())
                        .map(str::to_owned)
                })
                .collect();
            let at = |text: &str| {
                texts
                    .iter()
                    .position(|t| t == text)
                    .unwrap_or_else(|| panic!("{text} not recalled for {question}: {texts:?}"))
            };
            (
                at("Dana lives in Paris") < at("Dana lives in Lyon"),
                at("We moved to Paris last month") < at("I live in Lyon with my cat Miso"),
            )
        }
    };
    assert_eq!(order("Where does Dana live now?").await, (true, true));
    assert_eq!(order("Where does Dana live?").await, (true, true));
    assert_eq!(order("Where did Dana live in 2023?").await, (false, false));
    assert_eq!(order("Where did Dana live before?").await, (false, false));
    // Asked for one memory, what holds now is the one: the new value,
    // though the old one's turn shares the question's word ("live").
    let one = server
        .ok(
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            &key,
            Some(json!({"user_id": "dana", "query": "Where does Dana live?", "top_k": 1})),
            StatusCode::OK,
        )
        .await;
    let top = &one["items"][0];
    let text = top["fact"]["text"]
        .as_str()
        .or(top["window"]["message"]["content"].as_str())
        .unwrap();
    assert!(text.contains("Paris"), "{one}");

    // By its own words, as a keyword recall.
    let by_words = server
        .ok(
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            &key,
            Some(json!({"user_id": "dana", "query": "Miso", "mode": "keyword"})),
            StatusCode::OK,
        )
        .await;
    assert!(
        by_words["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["kind"] == "fact"
                && h["fact"]["text"] == "Dana has a cat named Miso"
                && h["keyword_score"].as_f64().unwrap() > 0.0),
        "{by_words}"
    );

    // A context shows the current facts in their own block, in the trace.
    let conversation = server.conversation(&key, &agent, "dana").await;
    let context = server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{conversation}/context"),
            &key,
            Some(json!({"message": "Any ideas for the weekend?"})),
            StatusCode::OK,
        )
        .await;
    let block = context["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| {
            m["content"]
                .as_str()
                .unwrap()
                .starts_with("[Known Facts About the User]")
        })
        .unwrap_or_else(|| panic!("no facts block: {context}"))["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        block.contains("(since 2024-06-01) Dana lives in Paris"),
        "{block}"
    );
    assert!(block.contains("Dana has a cat named Miso"), "{block}");
    assert!(!block.contains("Lyon"), "only facts that hold: {block}");
    let in_trace = context["trace"]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["block"] == "facts")
        .unwrap()
        .clone();
    assert_eq!(in_trace["items"], 2);
    assert!(in_trace["tokens"].as_u64().unwrap() > 0);
    assert_eq!(context["trace"]["facts"].as_array().unwrap().len(), 2);

    // Forgetting Dana erases them.
    let receipt = server
        .ok(Method::DELETE, "/v1/users/dana", &key, None, StatusCode::OK)
        .await;
    assert_eq!(receipt["relational"]["facts"], 3);
    assert_eq!(receipt["vectors"]["fact_vectors"], 3);
    assert!(facts(&server, &key, &agent, true).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_no_facts_are_learned() {
    // The default agent's provider has no key here: the summary is extractive.
    let server = TestServer::start().await;
    let (_, key) = server.tenant("acme").await;
    let agent = server.agent(&key, "support").await;
    let report = import(
        &server,
        &key,
        &agent,
        "2023-03-10",
        [
            "I live in Lyon with my cat Miso",
            "Lovely city!",
            "Yes, Miso loves the balcony",
        ],
    )
    .await;
    server.octopus.run_memory_jobs().await.unwrap();
    let episode = server
        .ok(
            Method::GET,
            &format!("/v1/episodes/{}", report["episodes"][0].as_str().unwrap()),
            &key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(episode["summary_source"], "extractive");
    assert!(facts(&server, &key, &agent, true).await.is_empty());
    // A user or agent of another tenant: 404, as everywhere.
    let (_, other) = server.tenant("globex").await;
    let refused = server
        .call(
            Method::GET,
            &format!("/v1/agents/{agent}/users/dana/facts"),
            &other,
            None,
        )
        .await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_own_instructions_on_what_to_remember_reach_the_model() {
    let (fake, url, server) = with_a_scripted_model().await;
    let (_, key) = server.tenant("acme").await;
    let instructions = "Keep the user's dietary needs. Never keep anything about their health.";
    let agent = server
        .ok(
            Method::POST,
            "/v1/agents",
            &key,
            Some(json!({"name": "concierge",
                "llm": {"provider": "ollama", "model": "llama3.2", "base_url": url},
                "memory": {"fact_instructions": instructions}})),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // Refused by name when blank or too long; the agent keeps its own.
    let path = format!("/v1/agents/{agent}");
    for bad in [json!(" "), json!("x".repeat(2001))] {
        let reply = server
            .call(
                Method::PATCH,
                &path,
                &key,
                Some(json!({"memory": {"fact_instructions": bad}})),
            )
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            reply.body
        );
        assert!(
            reply.body["error"]["field"]
                .as_str()
                .unwrap()
                .ends_with("fact_instructions"),
            "{}",
            reply.body
        );
    }
    let stored = server
        .ok(Method::GET, &path, &key, None, StatusCode::OK)
        .await;
    assert_eq!(stored["memory"]["fact_instructions"], instructions);

    fake.then(Answer::text(
        json!({"summary": "Dana is vegetarian.", "key_facts": ["Dana is vegetarian"]}).to_string(),
    ));
    import(
        &server,
        &key,
        &agent,
        "2024-02-01",
        [
            "I'm vegetarian, and my knee hurts",
            "Noted.",
            "Any dinner ideas?",
        ],
    )
    .await;
    server.octopus.run_memory_jobs().await.unwrap();
    let asked = fake.received();
    assert_eq!(asked.len(), 1, "the summary");
    let system = asked[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        system.starts_with("You write the long-term memory") && system.ends_with(instructions),
        "{system}"
    );

    // An agent without its own asks with the instructions alone.
    server
        .ok(
            Method::PATCH,
            &path,
            &key,
            Some(json!({"memory": {"fact_instructions": null}})),
            StatusCode::OK,
        )
        .await;
    fake.then(Answer::text(
        json!({"summary": "Dana asked about dinner.", "key_facts": []}).to_string(),
    ));
    import(
        &server,
        &key,
        &agent,
        "2024-03-01",
        ["What about lunch?", "Try the salad.", "Thanks!"],
    )
    .await;
    server.octopus.run_memory_jobs().await.unwrap();
    let asked = fake.received();
    let system = asked.last().unwrap().body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!system.contains("owner"), "{system}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn facts_are_filed_under_the_agents_categories_and_found_by_them() {
    let (fake, url, server) = with_a_scripted_model().await;
    let (_, key) = server.tenant("acme").await;

    // Names the model could not be held to are refused by their place.
    for (categories, field) in [
        (json!(["diet", "Travel Plans"]), "memory.fact_categories[1]"),
        (json!(["diet", "diet"]), "memory.fact_categories[1]"),
        (
            json!((0..21).map(|i| format!("c{i}")).collect::<Vec<_>>()),
            "memory.fact_categories",
        ),
    ] {
        let reply = server
            .call(
                Method::POST,
                "/v1/agents",
                &key,
                Some(json!({"name": "concierge", "llm": {"provider": "ollama", "model": "m", "base_url": url},
                    "memory": {"fact_categories": categories}})),
            )
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            reply.body
        );
        assert_eq!(reply.body["error"]["field"], field, "{}", reply.body);
    }
    let agents = server
        .ok(Method::GET, "/v1/agents", &key, None, StatusCode::OK)
        .await;
    assert!(
        agents["items"].as_array().unwrap().is_empty(),
        "nothing stored"
    );

    let agent = server
        .ok(
            Method::POST,
            "/v1/agents",
            &key,
            Some(json!({"name": "concierge",
                "llm": {"provider": "ollama", "model": "llama3.2", "base_url": url},
                "memory": {"fact_categories": ["diet", "travel"]}})),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    fake.then(Answer::text(
        json!({"summary": "Dana plans a trip.", "key_facts": [
            {"text": "Dana is vegetarian", "category": "diet"},
            {"text": "Dana flies to Oslo in May", "category": "Travel"},
            {"text": "Dana likes rain", "category": "weather"}]})
        .to_string(),
    ));
    import(
        &server,
        &key,
        &agent,
        "2024-04-01",
        [
            "I'm vegetarian and I fly to Oslo in May",
            "Noted.",
            "I like rain, too",
        ],
    )
    .await;
    server.octopus.run_memory_jobs().await.unwrap();
    let asked = fake.received();
    let system = asked[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.ends_with("the one of these that fits it best: diet, travel."),
        "{system}"
    );

    let filed: Vec<(String, Value)> = facts(&server, &key, &agent, false)
        .await
        .iter()
        .map(|f| {
            (
                f["text"].as_str().unwrap().to_owned(),
                f["category"].clone(),
            )
        })
        .collect();
    assert_eq!(filed.len(), 3, "{filed:?}");
    for (text, category) in [
        ("Dana is vegetarian", json!("diet")),
        ("Dana flies to Oslo in May", json!("travel")),
        ("Dana likes rain", Value::Null),
    ] {
        assert!(
            filed.contains(&(text.to_owned(), category.clone())),
            "{text} under {category}: {filed:?}"
        );
    }
    let diet = server
        .ok(
            Method::GET,
            &format!("/v1/agents/{agent}/users/dana/facts?category=diet"),
            &key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        texts(diet["items"].as_array().unwrap()),
        ["Dana is vegetarian"]
    );

    // Recall keeps the facts of the category asked for, and the turns.
    let recalled = server
        .ok(
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            &key,
            Some(
                json!({"user_id": "dana", "query": "Dana vegetarian Oslo rain",
                "fact_category": "travel", "top_k": 20}),
            ),
            StatusCode::OK,
        )
        .await;
    let hits = recalled["items"].as_array().unwrap();
    let facts_found: Vec<&str> = hits
        .iter()
        .filter(|h| h["kind"] == "fact")
        .map(|h| h["fact"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(facts_found, ["Dana flies to Oslo in May"], "{recalled}");
    assert!(hits.iter().any(|h| h["kind"] == "message"), "{recalled}");

    // A context shows the categories the agent puts in it, or every fact.
    let conversation = server.conversation(&key, &agent, "dana").await;
    let facts_block = |context: &Value| -> String {
        context["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["content"].as_str())
            .filter(|text| text.starts_with("[Known Facts About the User]"))
            .collect()
    };
    let context_path = format!("/v1/conversations/{conversation}/context");
    let ask = json!({"message": "Where should we eat?"});
    let every = server
        .ok(
            Method::POST,
            &context_path,
            &key,
            Some(ask.clone()),
            StatusCode::OK,
        )
        .await;
    assert!(
        ["vegetarian", "Oslo", "rain"]
            .iter()
            .all(|w| facts_block(&every).contains(w)),
        "{every}"
    );
    server
        .ok(
            Method::PATCH,
            &format!("/v1/agents/{agent}"),
            &key,
            Some(json!({"memory": {"context_fact_categories": ["diet"]}})),
            StatusCode::OK,
        )
        .await;
    let diet = server
        .ok(Method::POST, &context_path, &key, Some(ask), StatusCode::OK)
        .await;
    let block = facts_block(&diet);
    assert!(
        block.contains("vegetarian") && !block.contains("Oslo") && !block.contains("rain"),
        "{block}"
    );
}

/// Takes a turn of `conversation`; its reply.
async fn turn(server: &TestServer, key: &str, conversation: &str, message: &str) -> Value {
    server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{conversation}/turns"),
            key,
            Some(json!({"message": message})),
            StatusCode::OK,
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fact_said_mid_session_is_in_the_next_turns_context_and_learned_once() {
    let (server, fake, url) = TestServer::with_fake_chat().await;
    let (_, key) = server.tenant("acme").await;
    let memory = json!({"learn_every_messages": 2, "fact_categories": ["diet", "travel"]});
    let (agent, conversation) = server.chat_agent(&key, &url, memory).await;

    turn(&server, &key, &conversation, "I'm vegetarian, by the way.").await;
    server.octopus.run_memory_jobs().await.unwrap();
    assert_eq!(
        fake.received().len(),
        1,
        "one user message: nothing to learn yet"
    );
    turn(&server, &key, &conversation, "What should I cook tonight?").await;
    fake.then(Answer::text(
        json!({"facts": [{"text": "Dana is vegetarian", "category": "diet"}]}).to_string(),
    ));
    server.octopus.run_memory_jobs().await.unwrap();
    let asked = fake.received();
    assert_eq!(asked.len(), 3, "two turns, then one learning");
    let learning = asked[2].body["messages"].to_string();
    assert!(
        learning.contains("Read the latest messages")
            && learning.contains("fits it best: diet, travel.")
            && learning.contains("I'm vegetarian, by the way.")
            && learning.contains("What should I cook tonight?"),
        "{learning}"
    );
    let path = format!("/v1/agents/{agent}/users/dana/facts");
    let learned = server
        .ok(Method::GET, &path, &key, None, StatusCode::OK)
        .await;
    let learned = learned["items"].as_array().unwrap();
    assert_eq!(texts(learned), ["Dana is vegetarian"]);
    assert_eq!(learned[0]["category"], "diet");
    assert_eq!(learned[0]["source"], "learned");

    // The next turn, in the same session, knows it.
    turn(&server, &key, &conversation, "And for dessert?").await;
    let context = fake.last_body()["messages"].to_string();
    assert!(context.contains("Dana is vegetarian"), "{context}");

    // Running the queue again asks nothing: the window was learned.
    server.octopus.run_memory_jobs().await.unwrap();
    assert_eq!(fake.received().len(), 4);

    // The close learns from what came after, decided against what is known:
    // the model says it is known already.
    let episode = server
        .conversation_messages(&key, &conversation)
        .await
        .last()
        .unwrap()["episode_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let read = server
        .ok(
            Method::GET,
            &format!("/v1/episodes/{episode}"),
            &key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(read["facts_learned_through"], 4, "{read}");
    server
        .ok(
            Method::POST,
            &format!("/v1/episodes/{episode}/close"),
            &key,
            Some(json!({"end_reason": "user_closed"})),
            StatusCode::OK,
        )
        .await;
    fake.then(Answer::text(
        json!({"summary": "Dana, a vegetarian, asked for dinner and dessert ideas.",
               "key_facts": [{"text": "Dana is vegetarian", "category": "diet"}]})
        .to_string(),
    ))
    .then(Answer::text(
        json!({"facts": [{"new": 1, "action": "none", "same_as": 1}]}).to_string(),
    ));
    server.octopus.run_memory_jobs().await.unwrap();
    assert_eq!(fake.received().len(), 6, "the summary, then the decision");
    let after = server
        .ok(Method::GET, &path, &key, None, StatusCode::OK)
        .await;
    assert_eq!(
        texts(after["items"].as_array().unwrap()),
        ["Dana is vegetarian"]
    );
    let read = server
        .ok(
            Method::GET,
            &format!("/v1/episodes/{episode}"),
            &key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(read["facts_learned_through"], 6);
}
