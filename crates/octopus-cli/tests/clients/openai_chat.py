"""The official OpenAI Python package against Octopus's chat completions:
the agent as a model, a tool round, a whole answer and a streamed one.

Run by crates/octopus-cli/tests/it/clients.rs, which scripts the agent's
provider (a loopback fake speaking OpenAI's wire format) to answer the tool
round with a call of `order_status` and then "It ships Friday.", and every
later request with `echo: <the last user message>`. Environment:
OCTOPUS_URL, OCTOPUS_API_KEY, OCTOPUS_TEST_USER.
"""

import json
import os

from openai import OpenAI

client = OpenAI(base_url=os.environ["OCTOPUS_URL"] + "/v1", api_key=os.environ["OCTOPUS_API_KEY"])
USER = os.environ["OCTOPUS_TEST_USER"]

models = [model.id for model in client.models.list()]
assert "support" in models, models

# A tool round: the model's call comes out, its result goes back in.
tools = [{"type": "function", "function": {
    "name": "order_status", "description": "Look up an order",
    "parameters": {"type": "object", "properties": {"order": {"type": "string"}}, "required": ["order"]}}}]
question = {"role": "user", "content": "Where is order 4417?"}
asked = client.chat.completions.create(model="support", user=USER, messages=[question], tools=tools)
choice = asked.choices[0]
assert choice.finish_reason == "tool_calls", asked
call = choice.message.tool_calls[0]
assert call.function.name == "order_status" and json.loads(call.function.arguments) == {"order": "4417"}, call
answered = client.chat.completions.create(model="support", user=USER, tools=tools, messages=[
    question,
    choice.message.model_dump(exclude_none=True),
    {"role": "tool", "tool_call_id": call.id, "content": "shipped; arrives Friday"},
])
assert answered.choices[0].message.content == "It ships Friday.", answered

# Whole, with the conversation Octopus used in a header and the memory
# trace in the `octopus` field.
raw = client.chat.completions.with_raw_response.create(
    model="support", user=USER, messages=[{"role": "user", "content": "My order number is 4417."}])
conversation = raw.headers["x-octopus-conversation"]
whole = raw.parse()
assert whole.object == "chat.completion" and whole.model == "support", whole
assert whole.choices[0].message.content == "echo: My order number is 4417.", whole
assert whole.usage.total_tokens == whole.usage.prompt_tokens + whole.usage.completion_tokens > 0, whole.usage
extension = whole.model_extra["octopus"]
assert extension["conversation_id"] == conversation and extension["trace"]["budget"] > 0, extension

# Streamed: only the new message is sent; Octopus brings the rest.
stream = client.chat.completions.create(
    model="support", user=USER, stream=True, stream_options={"include_usage": True},
    messages=[{"role": "user", "content": "What is my order number?"}])
pieces, usage, finish = [], None, None
for chunk in stream:
    if chunk.usage:
        usage = chunk.usage
    for delta_choice in chunk.choices:
        if delta_choice.delta.content:
            pieces.append(delta_choice.delta.content)
        finish = delta_choice.finish_reason or finish
assert "".join(pieces) == "echo: What is my order number?", pieces
assert finish == "stop" and usage and usage.total_tokens > 0, (finish, usage)
print(json.dumps({"conversation": conversation}))
