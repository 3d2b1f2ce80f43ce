"""The API's schemas as pydantic models, generated from its /openapi.json by
clients/python/scripts/generate.py; do not edit."""

from __future__ import annotations

from enum import Enum
from typing import Any
from uuid import UUID

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, RootModel


class AgentStatus(BaseModel):
    id: UUID = Field(
        ..., description='An agent: a configured assistant with its own memory.'
    )
    model: str = Field(
        ...,
        description='`provider/model` of the model that writes summaries and learns facts.',
    )
    model_callable: bool = Field(
        ...,
        description='Whether that model can be called as the server is set up. Without\nit, messages are stored, embedded and recalled, but episodes get\ntheir opening lines as summaries and no fact is learned.',
    )
    name: str
    problem: str | None = Field(
        None,
        description="Why it cannot be (no key for the provider, a base URL the operator's\nrules forbid).",
    )


class Block(Enum):
    system_prompt = 'system_prompt'
    procedures = 'procedures'
    profile = 'profile'
    facts = 'facts'
    knowledge = 'knowledge'
    episodic = 'episodic'
    history = 'history'
    user_message = 'user_message'


class BlockTokens(BaseModel):
    block: Block
    items: int = Field(
        ..., description='Items kept: messages of history, chunks, snippets.'
    )
    tokens: int = Field(
        ..., description="Tokens of the block's messages, overhead included."
    )


class CacheCounts(BaseModel):
    histories: int


class CandidateFate(Enum):
    kept = 'kept'
    joined = 'joined'
    repeat = 'repeat'
    no_text = 'no_text'
    block_limit = 'block_limit'
    over_budget = 'over_budget'


class ChatContentPart(BaseModel):
    text: str | None = None
    type: str


class ChatRole(Enum):
    system = 'system'
    developer = 'developer'
    user = 'user'
    assistant = 'assistant'
    tool = 'tool'


class ChunkMetadata(BaseModel):
    category: str | None = Field(None, description='e.g. "policy", "manual", "faq".')
    chunk_index: int = Field(
        ..., description='Position of the chunk in its source, from 0.'
    )
    heading: str | None = Field(
        None,
        description='The Markdown headings above the chunk, outermost first, joined by " > ".',
    )
    indexed_at: AwareDatetime
    source: str = Field(
        ..., description="The source document's name, e.g. a file path."
    )


class Collection(BaseModel):
    agent_id: UUID = Field(
        ..., description='An agent: a configured assistant with its own memory.'
    )
    chunk_count: int
    created_at: AwareDatetime
    dimension: int
    model: str
    name: str


class Type(Enum):
    text = 'text'


class ContentPart1(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    text: str
    type: Type


class Type1(Enum):
    image_url = 'image_url'


class Type2(Enum):
    input_audio = 'input_audio'


class Type3(Enum):
    file = 'file'


class ContextRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    explain: bool | None = Field(
        None,
        description='Also say why each candidate was kept or left out, and why recall\nfound each memory where it did (`explanation`). Off, none of that\nwork is done.',
    )
    message: str = Field(
        ..., description="The user's new message. It is not stored: append it as usual."
    )


class ConversationSpec(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    agent_id: UUID = Field(
        ..., description='An agent: a configured assistant with its own memory.'
    )
    metadata: dict[str, Any] | None = None
    title: str | None = None
    user_id: str


class CreateApiKey(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    name: str


class CreateTenant(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    name: str


class DeliveryState(Enum):
    pending = 'pending'
    delivered = 'delivered'
    failed = 'failed'


class DocumentFormat(Enum):
    markdown = 'markdown'
    text = 'text'


class DocumentSummary(BaseModel):
    category: str | None = None
    chunk_count: int
    indexed_at: AwareDatetime = Field(
        ..., description='When its newest chunk was indexed.'
    )
    source: str


class EmbeddingStatus(BaseModel):
    dimensions: int | None = None
    model: str | None = None
    precision: str | None = Field(
        None,
        description='The local model\'s number format (`f32`, `bf16`, `int8`), chosen by\ntiming each at load (`precision = "auto"`) or by the setting; none for\na remote provider.',
    )


class EndReason(Enum):
    user_closed = 'user_closed'
    agent_closed = 'agent_closed'
    timeout = 'timeout'
    imported = 'imported'


class EpisodeLine(BaseModel):
    conversation_id: UUID = Field(
        ...,
        description='A conversation: the long-lived thread between one user and one agent.',
    )
    episode_id: UUID = Field(
        ...,
        description='An episode: one session of a conversation, from its first message to its close.',
    )
    started_at: AwareDatetime
    summary: str = Field(..., description='The first sentence of its summary.')


class EpisodeSummaryRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    key_facts: list[str] | None = None
    summary: str


class EventType(Enum):
    fact_added = 'fact.added'
    fact_updated = 'fact.updated'
    fact_deleted = 'fact.deleted'
    message_erased = 'message.erased'
    episode_closed = 'episode.closed'
    procedure_pending = 'procedure.pending'
    user_forgotten = 'user.forgotten'


class ExportFile(RootModel[list[dict[str, Any]]]):
    root: list[dict[str, Any]] = Field(
        ...,
        description='The `conversations.json` of a data export, as the service wrote it: an\narray of conversations (one conversation alone is read as an array of one).',
    )


class FactAction(Enum):
    learned = 'learned'
    added = 'added'
    corrected = 'corrected'
    imported = 'imported'
    deleted = 'deleted'


class FactEdit(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    reason: str | None = Field(
        None, description="Why, up to 500 characters; kept in the fact's history."
    )
    text: str = Field(
        ..., description='The fact as it should read, 1 to 2,000 characters.'
    )
    valid_from: AwareDatetime | None = Field(
        None, description='Since when the corrected words hold; now when absent.'
    )


class FactSource(Enum):
    learned = 'learned'
    manual = 'manual'


class Fault(Enum):
    configuration = 'configuration'
    request = 'request'
    busy = 'busy'
    provider = 'provider'


class FileRef(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    file_data: str | None = None
    file_id: str | None = None
    filename: str | None = None


class FullTextCounts(BaseModel):
    entries: int


class Fusion(Enum):
    scores = 'scores'
    standardised = 'standardised'
    ranks = 'ranks'


class ImageUrl(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    detail: str | None = None
    url: str


class ImportCounts(BaseModel):
    agents: int
    conversations: int
    episodes: int
    facts: int | None = None
    knowledge_chunks: int
    messages: int
    procedures: int
    vectors_embedded_again: int = Field(
        ...,
        description="Vectors (of chunks and procedure versions) embedded again because the\ndump's model is not this server's.",
    )


class ImportStatus(Enum):
    imported = 'imported'
    already_imported = 'already_imported'


class ImportedChat(BaseModel):
    conversation_id: UUID = Field(
        ...,
        description='A conversation: the long-lived thread between one user and one agent.',
    )
    export_id: str = Field(..., description="The export's own id of the conversation.")
    index: int = Field(..., description="Its place in the export's array.")
    messages: int = Field(..., description='Messages this import stored of it.')
    status: ImportStatus
    title: str | None = None


class ImportedMessage1(BaseModel):
    content: Any


class ImportedMessage2(BaseModel):
    tool_calls: Any


class IngestRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    category: str | None = Field(None, description='e.g. "policy", "manual", "faq".')
    format: DocumentFormat | None = None
    source: str = Field(
        ...,
        description='Names the document (a path, a URL). Ingesting the same source again\nreplaces its chunks.',
    )
    text: str


class IngestResponse(BaseModel):
    chunks: int
    source: str
    tokens: int


class InputAudio(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    data: str
    format: str


class ItemsDocumentSummary(BaseModel):
    items: list[DocumentSummary]


class KnowledgeInfo(BaseModel):
    collection: Collection | None = None


class LlmProvider(Enum):
    openai = 'openai'
    azure_openai = 'azure_openai'
    anthropic = 'anthropic'
    ollama = 'ollama'


class MatchedBy(Enum):
    regex = 'regex'
    semantic = 'semantic'


class PiiRegion(Enum):
    AC = 'AC'
    AD = 'AD'
    AE = 'AE'
    AF = 'AF'
    AG = 'AG'
    AI = 'AI'
    AL = 'AL'
    AM = 'AM'
    AO = 'AO'
    AR = 'AR'
    AS = 'AS'
    AT = 'AT'
    AU = 'AU'
    AW = 'AW'
    AX = 'AX'
    AZ = 'AZ'
    BA = 'BA'
    BB = 'BB'
    BD = 'BD'
    BE = 'BE'
    BF = 'BF'
    BG = 'BG'
    BH = 'BH'
    BI = 'BI'
    BJ = 'BJ'
    BL = 'BL'
    BM = 'BM'
    BN = 'BN'
    BO = 'BO'
    BQ = 'BQ'
    BR = 'BR'
    BS = 'BS'
    BT = 'BT'
    BW = 'BW'
    BY = 'BY'
    BZ = 'BZ'
    CA = 'CA'
    CC = 'CC'
    CD = 'CD'
    CF = 'CF'
    CG = 'CG'
    CH = 'CH'
    CI = 'CI'
    CK = 'CK'
    CL = 'CL'
    CM = 'CM'
    CN = 'CN'
    CO = 'CO'
    CR = 'CR'
    CU = 'CU'
    CV = 'CV'
    CW = 'CW'
    CX = 'CX'
    CY = 'CY'
    CZ = 'CZ'
    DE = 'DE'
    DJ = 'DJ'
    DK = 'DK'
    DM = 'DM'
    DO = 'DO'
    DZ = 'DZ'
    EC = 'EC'
    EE = 'EE'
    EG = 'EG'
    EH = 'EH'
    ER = 'ER'
    ES = 'ES'
    ET = 'ET'
    FI = 'FI'
    FJ = 'FJ'
    FK = 'FK'
    FM = 'FM'
    FO = 'FO'
    FR = 'FR'
    GA = 'GA'
    GB = 'GB'
    GD = 'GD'
    GE = 'GE'
    GF = 'GF'
    GG = 'GG'
    GH = 'GH'
    GI = 'GI'
    GL = 'GL'
    GM = 'GM'
    GN = 'GN'
    GP = 'GP'
    GQ = 'GQ'
    GR = 'GR'
    GT = 'GT'
    GU = 'GU'
    GW = 'GW'
    GY = 'GY'
    HK = 'HK'
    HN = 'HN'
    HR = 'HR'
    HT = 'HT'
    HU = 'HU'
    ID = 'ID'
    IE = 'IE'
    IL = 'IL'
    IM = 'IM'
    IN = 'IN'
    IO = 'IO'
    IQ = 'IQ'
    IR = 'IR'
    IS = 'IS'
    IT = 'IT'
    JE = 'JE'
    JM = 'JM'
    JO = 'JO'
    JP = 'JP'
    KE = 'KE'
    KG = 'KG'
    KH = 'KH'
    KI = 'KI'
    KM = 'KM'
    KN = 'KN'
    KP = 'KP'
    KR = 'KR'
    KW = 'KW'
    KY = 'KY'
    KZ = 'KZ'
    LA = 'LA'
    LB = 'LB'
    LC = 'LC'
    LI = 'LI'
    LK = 'LK'
    LR = 'LR'
    LS = 'LS'
    LT = 'LT'
    LU = 'LU'
    LV = 'LV'
    LY = 'LY'
    MA = 'MA'
    MC = 'MC'
    MD = 'MD'
    ME = 'ME'
    MF = 'MF'
    MG = 'MG'
    MH = 'MH'
    MK = 'MK'
    ML = 'ML'
    MM = 'MM'
    MN = 'MN'
    MO = 'MO'
    MP = 'MP'
    MQ = 'MQ'
    MR = 'MR'
    MS = 'MS'
    MT = 'MT'
    MU = 'MU'
    MV = 'MV'
    MW = 'MW'
    MX = 'MX'
    MY = 'MY'
    MZ = 'MZ'
    NA = 'NA'
    NC = 'NC'
    NE = 'NE'
    NF = 'NF'
    NG = 'NG'
    NI = 'NI'
    NL = 'NL'
    NO = 'NO'
    NP = 'NP'
    NR = 'NR'
    NU = 'NU'
    NZ = 'NZ'
    OM = 'OM'
    PA = 'PA'
    PE = 'PE'
    PF = 'PF'
    PG = 'PG'
    PH = 'PH'
    PK = 'PK'
    PL = 'PL'
    PM = 'PM'
    PR = 'PR'
    PS = 'PS'
    PT = 'PT'
    PW = 'PW'
    PY = 'PY'
    QA = 'QA'
    RE = 'RE'
    RO = 'RO'
    RS = 'RS'
    RU = 'RU'
    RW = 'RW'
    SA = 'SA'
    SB = 'SB'
    SC = 'SC'
    SD = 'SD'
    SE = 'SE'
    SG = 'SG'
    SH = 'SH'
    SI = 'SI'
    SJ = 'SJ'
    SK = 'SK'
    SL = 'SL'
    SM = 'SM'
    SN = 'SN'
    SO = 'SO'
    SR = 'SR'
    SS = 'SS'
    ST = 'ST'
    SV = 'SV'
    SX = 'SX'
    SY = 'SY'
    SZ = 'SZ'
    TA = 'TA'
    TC = 'TC'
    TD = 'TD'
    TG = 'TG'
    TH = 'TH'
    TJ = 'TJ'
    TK = 'TK'
    TL = 'TL'
    TM = 'TM'
    TN = 'TN'
    TO = 'TO'
    TR = 'TR'
    TT = 'TT'
    TV = 'TV'
    TW = 'TW'
    TZ = 'TZ'
    UA = 'UA'
    UG = 'UG'
    US = 'US'
    UY = 'UY'
    UZ = 'UZ'
    VA = 'VA'
    VC = 'VC'
    VE = 'VE'
    VG = 'VG'
    VI = 'VI'
    VN = 'VN'
    VU = 'VU'
    WF = 'WF'
    WS = 'WS'
    XK = 'XK'
    YE = 'YE'
    YT = 'YT'
    ZA = 'ZA'
    ZM = 'ZM'
    ZW = 'ZW'


class MemoryKind(Enum):
    message = 'message'
    summary = 'summary'
    fact = 'fact'


class NewFactSpec(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    category: str | None = Field(
        None,
        description="One of the agent's `memory.fact_categories`, or `instruction` or\n`preference` (a standing request, shown first in every context);\nnone when absent.",
    )
    key: str | None = Field(
        None,
        description="A name of the client's for the fact, up to 200 characters, by which\nit is read (`?key=`) and written again: no other fact of the user\nthat holds in the same category may have it.",
    )
    reason: str | None = Field(
        None, description="Why, up to 500 characters; kept in the fact's history."
    )
    text: str = Field(..., description='The fact, 1 to 2,000 characters.')
    valid_from: AwareDatetime | None = Field(
        None, description='Since when it holds; now when absent.'
    )


class NewIds(BaseModel):
    agent_names: dict[str, str] = Field(
        ...,
        description='Agents the copy renamed because the tenant had one of the name\nalready ("support" becomes "support (copy)"): old name to new.',
    )
    agents: dict[str, str]
    conversations: dict[str, str]
    procedure_names: dict[str, str] = Field(
        ...,
        description='Shared procedures renamed for the same reason: old name to new.',
    )


class NewMessage1(BaseModel):
    content: Any


class NewMessage2(BaseModel):
    tool_calls: Any


class NewWebhook(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    description: str | None = None
    events: list[EventType] = Field(
        ..., description='The event types to receive; at least one.'
    )
    url: str = Field(
        ..., description='Where events are POSTed: an `http` or `https` URL.'
    )


class PiiKind(Enum):
    email = 'email'
    phone = 'phone'
    card = 'card'
    iban = 'iban'
    ssn = 'ssn'
    ip_address = 'ip_address'
    secret = 'secret'


class PiiPolicy(Enum):
    off = 'off'
    flag = 'flag'
    redact = 'redact'
    redact_outgoing = 'redact_outgoing'
    redact_stored = 'redact_stored'


class ProcedureMatch(BaseModel):
    id: UUID = Field(
        ..., description='A named step-by-step procedure (procedural memory).'
    )
    matched_by: MatchedBy
    name: str
    score: float = Field(
        ...,
        description='1 for a regex match; the cosine similarity for a semantic one.',
    )
    version: int


class ProcedureStep(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    arguments: dict[str, Any] | None = Field(
        None,
        description="The shape of the tool's arguments (a JSON Schema object, or an\nexample); `null` is none.",
    )
    instruction: str = Field(..., description='What to do, in words the model reads.')
    tool: str | None = Field(None, description='A tool to call for this step.')


class ProfileFact(BaseModel):
    changed_by: str = Field(
        ...,
        description="Who wrote this version: `model`, `patterns` (a standing request\nrecognised in the user's words), or the name of the key that did.",
    )
    id: UUID = Field(
        ...,
        description='A fact learned about a user: a memory item of its own, with the period\nit held true.',
    )
    key: str | None = Field(None, description='The name a client gave it.')
    since: AwareDatetime = Field(..., description='When it became true.')
    source: FactSource = Field(..., description='`learned` or `manual`.')
    text: str


class ProfileSummary(BaseModel):
    agent_id: UUID = Field(
        ..., description='An agent: a configured assistant with its own memory.'
    )
    fact_ids: list[UUID] = Field(..., description='The facts it was written from.')
    text: str
    user_id: str
    written_at: AwareDatetime


class PruneReason(Enum):
    block_limit = 'block_limit'
    oldest_history = 'oldest_history'
    lowest_score = 'lowest_score'
    latest_exchange = 'latest_exchange'


class Pruned(BaseModel):
    block: Block
    id: str = Field(
        ...,
        description="The item's id; for history, its position among the history messages.",
    )
    reason: PruneReason
    score: float | None = None
    tokens: int = Field(..., description='What it cost before it was dropped.')


class QueueCounts(BaseModel):
    jobs: int


class QueueStatus(BaseModel):
    bulk: int = Field(..., description='Jobs of imports and other bulk writes.')
    live: int = Field(..., description='Jobs of live conversations, done first.')
    oldest_queued_at: AwareDatetime | None = Field(
        None, description='When the oldest waiting job was queued.'
    )
    parked: int = Field(
        ...,
        description='Jobs set aside: they cannot succeed as the server is configured\n(a summary with no model reachable).',
    )
    waiting: int = Field(..., description='Jobs waiting (`live` and `bulk` together).')


class RecallMode(Enum):
    hybrid = 'hybrid'
    vector = 'vector'
    keyword = 'keyword'


class RecallQuery(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    explain: bool | None = Field(
        None,
        description='Each hit says why it was returned where it was (`explanation`): the\nsearches that found it, the fusion, each reordering that moved it.\nOff, recall does none of that work.',
    )
    fact_category: str | None = Field(
        None,
        description="Only facts filed under this category (one of the agent's\n`memory.fact_categories`); messages and summaries as ever.",
    )
    from_: AwareDatetime | None = Field(
        None,
        alias='from',
        description='Bounds on when the remembered message was said: `from` inclusive, `to`\nexclusive.',
    )
    include_facts: bool | None = Field(
        None,
        description='Whether facts learned about the user are recalled beside messages,\nthose replaced since too (each says when it held).',
    )
    include_messages: bool | None = Field(
        None,
        description="Whether past messages are recalled; without them, only summaries\nand facts (a framework's store searches its facts so).",
    )
    include_summaries: bool | None = Field(
        None, description='Whether episode summaries are recalled beside messages.'
    )
    min_score: float | None = Field(
        None,
        description="Drops vector hits of lower cosine similarity. Keyword hits are kept:\nthey matched the query's words, and BM25 is on another scale.",
    )
    mode: RecallMode | None = None
    neighbours: int | None = Field(
        None, description='Turns before and after each message hit to return with it.'
    )
    query: str
    recency_half_life_days: float | None = Field(
        None,
        description="When set, a memory's score is multiplied by `0.5^(age / half-life)`,\nage counted from the newest memory among the candidates.",
    )
    to: AwareDatetime | None = None
    top_k: int | None = None
    user_id: str


class RecallReordering(Enum):
    recency = 'recency'
    named_speaker = 'named_speaker'
    named_date = 'named_date'
    held_at_time_asked = 'held_at_time_asked'
    restated = 'restated'


class RecallSearch(Enum):
    vector = 'vector'
    keyword = 'keyword'
    name = 'name'
    sub_question_vector = 'sub_question_vector'
    sub_question_keyword = 'sub_question_keyword'
    keyword_feedback = 'keyword_feedback'
    meaning_feedback = 'meaning_feedback'


class RelationalCounts(BaseModel):
    conversations: int
    episodes: int
    fact_history: int | None = Field(
        None, description="Entries of those facts' histories, deleted facts' included."
    )
    facts: int | None = Field(
        None, description='Facts learned about the user, current and replaced.'
    )
    key_facts: int
    learned_procedures: int = Field(
        ...,
        description="Procedures learned from the user's episodes, with all their versions.",
    )
    messages: int
    summaries: int = Field(
        ..., description="Episode summaries (each episode's at most one)."
    )


class Retrieved(BaseModel):
    id: str = Field(
        ...,
        description='What the trace calls it: a chunk id, a message id, an episode id.',
    )
    label: str = Field(
        ...,
        description='Where it came from, shown to the model: a document source and heading,\nor a date and speaker.',
    )
    score: float = Field(
        ...,
        description="The retrieval score, on one scale for every block (the engine gives\neach block's best 1); the lowest is pruned first.",
    )
    text: str


class Role(Enum):
    user = 'user'
    assistant = 'assistant'
    system = 'system'
    tool = 'tool'


class RollbackRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    version: int = Field(..., description='An approved version, which serves again.')


class SearchMode(Enum):
    hybrid = 'hybrid'
    vector = 'vector'
    keyword = 'keyword'


class ServerStatus(BaseModel):
    agent: AgentStatus | None = None
    database: str = Field(
        ..., description='Where data is kept: `sqlite` or `postgres`.'
    )
    embedding: EmbeddingStatus
    memory_queue: QueueStatus
    vectors: str = Field(
        ...,
        description='Where vectors are searched: `embedded`, `pgvector` or `qdrant`.',
    )
    version: str = Field(..., description="The server's version.")


class StreamOptions(BaseModel):
    include_usage: bool | None = Field(
        None,
        description='Send usage in a last chunk with no choices, as OpenAI does; otherwise\nusage rides on the chunk with the finish reason.',
    )


class SummarySource(Enum):
    caller = 'caller'
    llm = 'llm'
    extractive = 'extractive'


class TenantRowCounts(BaseModel):
    agents: int = Field(..., description='Agents, deleted ones included.')
    api_keys: int
    conversations: int
    episodes: int
    fact_history: int
    facts: int = Field(..., description='Facts, current and replaced.')
    knowledge_chunks: int
    messages: int
    procedures: int = Field(..., description='Procedures, each with all its versions.')
    webhook_deliveries: int = Field(
        ..., description='Webhook deliveries, sent or waiting.'
    )
    webhooks: int


class TenantVectorCounts(BaseModel):
    knowledge_vectors: int
    memory_vectors: int = Field(
        ..., description='Vectors of messages, summaries and facts.'
    )
    sets: int = Field(
        ...,
        description="Vector sets (an agent's memories, an agent's knowledge) erased from\nthe vector index.",
    )


class ToolCall(BaseModel):
    arguments: dict[str, Any] = Field(
        ...,
        description='The arguments as JSON (an object, when the model kept to the schema).',
    )
    id: str = Field(
        ..., description="The provider's id of the call; a tool result names it."
    )
    name: str


class ToolCallRecord(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    arguments: Any | None = Field(
        None,
        description='The arguments as JSON (an OpenAI arguments string is parsed when it is JSON).',
    )
    duration_ms: int | None = None
    function_name: str
    is_error: bool | None = None
    result: Any | None = None
    tool_call_id: str


class ToolResultBody(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    content: dict[str, Any] = Field(
        ..., description="The tool's output: a string, or any JSON."
    )
    duration_ms: int | None = None
    is_error: bool | None = None
    tool_call_id: str = Field(
        ..., description="The id of the call answered (from the turn's `tool_calls`)."
    )


class ToolSpec(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    description: str | None = None
    name: str
    parameters: dict[str, Any] | None = Field(
        None, description='A JSON Schema object; `{"type": "object"}` when absent.'
    )


class TurnRequest1(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    message: str = Field(..., description="The user's message.")
    stream: bool | None = Field(
        None,
        description="Answer with server-sent events: `delta` events with the reply's text\nas it is generated, then `done` with the whole response (or `error`\nwith an error body).",
    )
    tool_results: list[ToolResultBody] | None = Field(
        None, description="Results of the model's pending tool calls, one per call."
    )
    tools: list[ToolSpec] | None = Field(
        None,
        description='Tools the model may call; send them again when continuing a turn.',
    )


class TurnRequest2(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    message: None = Field(None, description="The user's message.")
    stream: bool | None = Field(
        None,
        description="Answer with server-sent events: `delta` events with the reply's text\nas it is generated, then `done` with the whole response (or `error`\nwith an error body).",
    )
    tool_results: list[ToolResultBody] = Field(
        ..., description="Results of the model's pending tool calls, one per call."
    )
    tools: list[ToolSpec] | None = Field(
        None,
        description='Tools the model may call; send them again when continuing a turn.',
    )


class TurnRequest(RootModel[TurnRequest1 | TurnRequest2]):
    root: TurnRequest1 | TurnRequest2 = Field(
        ...,
        description='A new message, or the results of the tool calls the model made in this\nturn (exactly one of the two).',
    )


class Usage(BaseModel):
    input_tokens: int
    output_tokens: int


class UserActivity(BaseModel):
    conversations: int = Field(..., description='Live conversations.')
    episodes: int = Field(..., description='Live episodes of those conversations.')
    first_seen_at: AwareDatetime = Field(
        ..., description='When the first of the conversations began.'
    )
    last_active_at: AwareDatetime = Field(
        ..., description='When the newest of them last changed.'
    )
    messages: int = Field(..., description='Messages of those episodes.')


class UserSummary(BaseModel):
    conversation_count: int = Field(
        ..., description='Live conversations between this user and the agent.'
    )
    last_active_at: AwareDatetime = Field(
        ..., description='When the newest of them last changed.'
    )
    user_id: str


class VectorCounts(BaseModel):
    fact_vectors: int | None = None
    graphs_rebuilt: int = Field(
        ...,
        description='Saved vector-index graphs dropped, to be rebuilt from the remaining\nvectors at their next search.',
    )
    message_vectors: int
    summary_vectors: int


class VersionStatus(Enum):
    pending = 'pending'
    approved = 'approved'
    rejected = 'rejected'
    superseded = 'superseded'


class WebhookInfo(BaseModel):
    created_at: AwareDatetime
    description: str | None = None
    disabled_at: AwareDatetime | None = None
    disabled_reason: str | None = Field(
        None,
        description='Why it was disabled: it answered 410 Gone, or failed too long.',
    )
    enabled: bool = Field(..., description='Whether deliveries are sent to it.')
    events: list[EventType]
    failing_since: AwareDatetime | None = Field(
        None,
        description='Since when every delivery to it has failed; absent while it succeeds.',
    )
    id: UUID = Field(
        ..., description='An endpoint a tenant registered for events about its memory.'
    )
    url: str


class ApiKey(BaseModel):
    created_at: AwareDatetime
    id: UUID = Field(
        ..., description="An API key's public id (the secret itself is never stored)."
    )
    name: str
    prefix: str = Field(
        ...,
        description='The first characters of the secret, so that a person can tell keys apart.',
    )
    revoked_at: AwareDatetime | None = None
    tenant_id: UUID = Field(
        ...,
        description='A tenant: the unit of isolation. Nothing of one tenant is visible to another.',
    )


class ChatMessage(BaseModel):
    content: str | list[ChatContentPart] | None = None
    role: ChatRole
    tool_call_id: str | None = Field(
        None, description="For a tool's result: the call it answers."
    )


class ChatTool(BaseModel):
    function: ToolSpec
    type: str = Field(..., description='Always `function`.')


class ChatsImported(BaseModel):
    already_imported: int = Field(
        ...,
        description='How many an earlier import of the same conversations stored; they are\nleft as they are.',
    )
    conversations: list[ImportedChat] = Field(
        ...,
        description="Each conversation of the export with something said in it, in the\nexport's order.",
    )
    empty: int = Field(
        ...,
        description='Conversations of the export with nothing said in them, not stored.',
    )
    imported: int = Field(..., description='How many of them this import stored.')
    messages: int = Field(..., description='Messages this import stored.')


class Chunk(ChunkMetadata):
    agent_id: UUID = Field(
        ..., description='An agent: a configured assistant with its own memory.'
    )
    content: str
    id: UUID


class CloseEpisodeRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    end_reason: EndReason
    ended_at: AwareDatetime | None = Field(
        None, description='When the episode ended; now when absent.'
    )
    key_facts: list[str] | None = None
    summary: str | None = Field(
        None,
        description='A summary written by the caller; Octopus writes one otherwise.',
    )


class ContentPart2(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    image_url: ImageUrl
    type: Type1


class ContentPart3(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    input_audio: InputAudio
    type: Type2


class ContentPart4(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    file: FileRef
    type: Type3


class ContextTrace(BaseModel):
    blocks: list[BlockTokens]
    budget: int
    episodic: list[Retrieved]
    facts: list[Retrieved] | None = Field(
        None,
        description='Every fact, knowledge chunk and episodic snippet offered, kept or not.',
    )
    knowledge: list[Retrieved]
    procedures: list[ProcedureMatch] | None = Field(
        None,
        description='The procedures that matched the message, and why (kept or pruned).',
    )
    profile: list[Retrieved] | None = Field(
        None, description="The profile's lines offered, kept or not."
    )
    pruned: list[Pruned] = Field(..., description='In the order they were dropped.')
    total_tokens: int = Field(
        ..., description='Tokens of the whole prompt, reply priming included.'
    )
    vector_search_unavailable: str | None = Field(
        None,
        description='Set when the vector backend could not be reached (a Qdrant server\ndown, say): knowledge and memories were then found by their words\nalone. Says which service, and why.',
    )


class Conversation(BaseModel):
    agent_id: UUID = Field(
        ..., description='An agent: a configured assistant with its own memory.'
    )
    created_at: AwareDatetime
    deleted_at: AwareDatetime | None = Field(
        None, description='A deleted conversation takes no new messages.'
    )
    id: UUID = Field(
        ...,
        description='A conversation: the long-lived thread between one user and one agent.',
    )
    metadata: dict[str, Any]
    opening: str | None = Field(
        None,
        description='The first words the user said in it (of its first user message, the\nredacted copy when there is one), for naming it in a list: at most\n[`OPENING_CHARS`] characters, cut at a word. Absent until the user\nhas said something, and in dumps.',
    )
    title: str | None = None
    updated_at: AwareDatetime
    user_id: str = Field(
        ..., description="The caller's own id for the user: an opaque string."
    )


class CreatedApiKey(ApiKey):
    key: str


class CreatedWebhook(BaseModel):
    secret: str = Field(
        ...,
        description="`whsec_` and the base64 of a 32-byte key. Verify each delivery's\n`webhook-signature` with it, as the Standard Webhooks libraries do.",
    )
    webhook: WebhookInfo


class Delivery(BaseModel):
    attempts: int
    created_at: AwareDatetime
    delivered_at: AwareDatetime | None = None
    event_type: EventType
    last_attempt_at: AwareDatetime | None = None
    last_error: str | None = Field(None, description='Why the last attempt failed.')
    last_status: int | None = Field(
        None,
        description='The HTTP status of the last attempt; none when it got no answer.',
    )
    message_id: str = Field(
        ...,
        description="The `webhook-id` header of every attempt: `msg_` and the event's id.",
    )
    next_attempt_at: AwareDatetime | None = Field(
        None, description='When the next attempt is due, while pending.'
    )
    state: DeliveryState
    user_id: str | None = None
    webhook_id: UUID = Field(
        ..., description='An endpoint a tenant registered for events about its memory.'
    )


class Document(BaseModel):
    chunks: list[Chunk]
    source: str
    text: str = Field(
        ..., description="The chunks' text, in order, separated by blank lines."
    )


class DumpImported(ImportCounts):
    new_ids: NewIds | None = None
    tenant_id: UUID = Field(..., description='The tenant the dump went into.')


class Episode(BaseModel):
    agent_id: UUID = Field(
        ..., description='An agent: a configured assistant with its own memory.'
    )
    archived_at: AwareDatetime | None = Field(
        None,
        description="Set when the retention job archived the episode (its agent's\n`retention_days` after it closed): it leaves recall, search and context,\nand can still be read, restored or purged.",
    )
    conversation_id: UUID = Field(
        ...,
        description='A conversation: the long-lived thread between one user and one agent.',
    )
    created_at: AwareDatetime
    deleted_at: AwareDatetime | None = Field(
        None,
        description='Soft-deleted episodes are hidden from every read until restored or purged.',
    )
    end_reason: EndReason | None = None
    ended_at: AwareDatetime | None = Field(
        None, description='Set when the episode closes.'
    )
    facts_learned_through: int | None = Field(
        None,
        description='How many of its messages (the first ones, by ordinal) facts have\nbeen learned from: during the session every\n`memory.learn_every_messages` user messages, and at close.',
    )
    id: UUID = Field(
        ...,
        description='An episode: one session of a conversation, from its first message to its close.',
    )
    key_facts: list[str] = Field(
        ...,
        description='Facts worth remembering, named by the summary written at close.',
    )
    last_message_at: AwareDatetime = Field(
        ..., description='The timestamp of its latest message.'
    )
    message_count: int
    started_at: AwareDatetime = Field(
        ..., description='The timestamp of its first message.'
    )
    summary: str | None = Field(None, description='A short summary written at close.')
    summary_source: SummarySource | None = None
    total_input_tokens: int = Field(
        ..., description='Tokens of the messages the model read (user, system, tool).'
    )
    total_output_tokens: int = Field(
        ..., description='Tokens of the messages the model wrote (assistant).'
    )
    updated_at: AwareDatetime
    user_id: str


class ErrorDetail(BaseModel):
    code: str = Field(
        ...,
        description='Stable, machine-readable: `invalid_request`, `agent_not_found`, …',
    )
    fault: Fault | None = None
    field: str | None = Field(
        None, description="The offending field's path, e.g. `messages[2].role`."
    )
    message: str
    provider: str | None = Field(
        None,
        description="The agent's model provider, when the failure is its (`llm_*` codes).",
    )


class Fact(BaseModel):
    agent_id: UUID = Field(
        ..., description='An agent: a configured assistant with its own memory.'
    )
    category: str | None = Field(
        None,
        description="The category it is filed under: one of the agent's\n`memory.fact_categories`, or `instruction` or `preference` for a\nuser's standing request; absent when none applies.",
    )
    changed_by: str | None = Field(
        None,
        description="Who wrote this version: `model` for one the model learned,\n`patterns` for a standing request recognised in the user's words,\nelse the name of the API key that made the change.",
    )
    created_at: AwareDatetime
    episode_id: UUID | None = None
    id: UUID = Field(
        ...,
        description='A fact learned about a user: a memory item of its own, with the period\nit held true.',
    )
    key: str | None = Field(
        None,
        description="The name the client gave a fact it added, by which it reads and\nwrites it again (a framework's store keys its items so): unique among\nthe user's facts that hold in the same category, and kept by the\nversions that correct it.",
    )
    message_ids: list[UUID] = Field(
        ..., description='The messages it was learned from.'
    )
    source: FactSource | None = Field(
        None, description='Whether the model learned it or a person wrote it.'
    )
    superseded_by: UUID | None = None
    tenant_id: UUID = Field(
        ...,
        description='A tenant: the unit of isolation. Nothing of one tenant is visible to another.',
    )
    text: str
    user_id: str
    valid_from: AwareDatetime = Field(
        ..., description='When it became true: the time of the messages it came from.'
    )
    valid_to: AwareDatetime | None = Field(
        None, description='When a newer fact replaced it; absent while it holds.'
    )


class FactDeletionReceipt(BaseModel):
    compacted: bool = Field(
        ...,
        description="No removed word is left on disk now. When false, a reader (an export,\na backup) holds back the last step, and the words leave the files'\nlogs as soon as it ends, without delaying anyone's writes.",
    )
    fact_id: UUID = Field(
        ...,
        description="The fact's first version: its history is read by any version's id.",
    )
    vectors: int = Field(
        ...,
        description='Their memory vectors removed, in the store and its vector index.',
    )
    versions: int = Field(
        ..., description='Its versions removed, the current one and those it replaced.'
    )


class FactGroup(BaseModel):
    category: str | None = Field(
        None, description='Absent for the facts filed under none.'
    )
    facts: list[ProfileFact]


class FactHistoryEntry(BaseModel):
    action: FactAction
    at: AwareDatetime
    changed_by: str = Field(
        ..., description='`model`, or the name of the API key that made the change.'
    )
    fact_id: UUID = Field(
        ...,
        description='The version the change wrote (for a deletion, the version that held).',
    )
    reason: str | None = Field(
        None, description='Why, when the person said; absent once the fact was deleted.'
    )
    text: str | None = Field(
        None, description="The version's words; absent once the fact was deleted."
    )


class ForgetReceipt(BaseModel):
    agent_id: UUID | None = None
    cache: CacheCounts = Field(
        ..., description="Conversation histories held in this server's memory."
    )
    compacted: bool = Field(
        ...,
        description="No removed text is left in the data directory now. When false, a\nreader (an export, a backup) holds back the last step, and the words\nleave the files' logs as soon as it ends, without delaying writes.",
    )
    full_text: FullTextCounts = Field(
        ..., description='Entries of the full-text index over messages.'
    )
    queue: QueueCounts = Field(
        ..., description='Memory work queued for the removed messages and episodes.'
    )
    relational: RelationalCounts = Field(
        ..., description='Rows of the relational store.'
    )
    user_id: str
    vectors: VectorCounts = Field(
        ...,
        description='Memory vectors, and the vector-index graphs rebuilt without them.',
    )


class ImportResponse(BaseModel):
    conversation: Conversation
    episodes: list[UUID] = Field(
        ..., description='One episode per imported session, in order.'
    )
    messages: int


class ItemsApiKey(BaseModel):
    items: list[ApiKey]


class ItemsConversation(BaseModel):
    items: list[Conversation]


class ItemsDelivery(BaseModel):
    items: list[Delivery]


class ItemsEpisode(BaseModel):
    items: list[Episode]


class ItemsFact(BaseModel):
    items: list[Fact]


class ItemsFactHistoryEntry(BaseModel):
    items: list[FactHistoryEntry]


class ItemsUserSummary(BaseModel):
    items: list[UserSummary]


class ItemsWebhookInfo(BaseModel):
    items: list[WebhookInfo]


class KnowledgeHit(BaseModel):
    chunk: Chunk
    keyword_score: float | None = Field(
        None, description='BM25 (higher is better), when found by words.'
    )
    score: float = Field(
        ...,
        description='The ranking score: the fused score in hybrid mode, else the one below.',
    )
    vector_score: float | None = Field(
        None, description='Cosine similarity, when found by meaning.'
    )


class KnowledgeSearchRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    category: str | None = None
    indexed_from: AwareDatetime | None = None
    indexed_to: AwareDatetime | None = None
    min_score: float | None = Field(
        None, description="Default: the agent's `memory.knowledge_min_score`."
    )
    mode: SearchMode | None = Field(
        None, description='`hybrid` (default), `vector` or `keyword`.'
    )
    query: str
    source: str | None = None
    top_k: int | None = Field(
        None, description="Default: the agent's `memory.knowledge_top_k`."
    )


class LlmConfig(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    api_key_env: str | None = Field(
        None,
        description="The environment variable of the server that holds the API key, when\nnot the provider's conventional one (`OPENAI_API_KEY`,\n`AZURE_OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). Only those names and\nnames starting `OCTOPUS_LLM_KEY_` are accepted, so an agent cannot make\nthe server send any other secret of its environment. The key itself is\nnever stored.",
    )
    api_version: str | None = Field(
        None, description='Azure OpenAI API version, e.g. `2024-10-21`.'
    )
    base_url: str | None = Field(
        None,
        description="Overrides the provider's default endpoint (required for Azure OpenAI).",
    )
    deployment: str | None = Field(None, description='Azure OpenAI deployment name.')
    max_output_tokens: int | None = None
    model: str = Field(
        ...,
        description='The model name (for Azure OpenAI: the model behind the deployment).',
    )
    provider: LlmProvider
    summary_model: str | None = Field(
        None,
        description='A cheaper model for episode summaries; the main model when absent.',
    )
    temperature: float | None = None
    top_p: float | None = None


class MemoryConfig(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    context_fact_categories: list[str] | None = Field(
        [],
        description="The categories whose facts a turn's context shows in its facts block\n(names of `fact_categories`; another matches no fact); every fact\nwhen empty (the default).",
    )
    embed_messages: bool | None = Field(
        True, description='Embed messages for recall by meaning. Default true.'
    )
    episode_idle_timeout_secs: int | None = Field(
        1800,
        description='An open episode with no message for this long is closed with reason\n`timeout`; the next message opens a new one. Default 1800 (30 minutes).',
    )
    episodic_max_tokens: int | None = Field(
        2000,
        description="Most tokens the snippets of past conversations may take in a turn's\ncontext. Default 2000 (about 8 KB of text).",
    )
    episodic_neighbours: int | None = Field(
        1,
        description='Turns either side of each recalled turn of a few words shown with it,\nso that "Wow, where was that?" comes with what it answers (a longer\nturn is shown alone). Default 1.',
    )
    episodic_top_k: int | None = Field(
        45,
        description='Most memories of past conversations recalled per turn, best first.\nHow many reach the context is decided by `episodic_max_tokens`.\nDefault 45; 0 recalls none.',
    )
    fact_categories: list[str] | None = Field(
        [],
        description='The categories the model files each learned fact under, one per\nfact (say `preference`, `profile`, `plan`): up to 20 names of\nlower-case letters, digits, `_` and `-`, each up to 40 characters.\nFacts are listed and recalled by category. None by default: facts\ncarry no category.',
    )
    fact_instructions: str | None = Field(
        None,
        description="What this agent's model should remember about users, and never\nremember, in the owner's words (up to 2,000 characters): added to\nthe instructions with which the model writes an episode's key facts,\nwhich become the user's facts. None by default.",
    )
    history_max_messages: int | None = Field(
        20,
        description='Most recent messages of the current episode kept as history. Default 20.',
    )
    knowledge_min_score: float | None = Field(
        0.3,
        description='Knowledge chunks scoring below this (cosine) are dropped. Default 0.3.\n0.7 would suit models whose scores run high; with all-MiniLM-L6-v2 a\ncorrect paraphrase scores around 0.4.',
    )
    knowledge_top_k: int | None = Field(
        5,
        description='Knowledge chunks retrieved per turn. Default 5; 0 puts\nno knowledge in a context (a knowledge search that names no\n`top_k` then takes 5).',
    )
    learn_every_messages: int | None = Field(
        10,
        description="Facts are learned from an open episode every this many user\nmessages (from those since the last learning), besides at its close,\nso that what a user says is known for the rest of the session.\nDefault 10; 0 learns at close only. Asks the agent's summary model,\nso it needs the server's `[llm] summarise_episodes`.",
    )
    learn_procedures: bool | None = Field(
        False,
        description="When an episode that called tools closes, ask the agent's model to\npropose a procedure from it (stored pending approval). Default false.",
    )
    max_context_facts: int | None = Field(
        20,
        description="Most of the user's current facts put in a turn's context, in their\nown block: the user's standing instructions and preferences first\n(up to 20, whatever `context_fact_categories` says), then the other\nfacts, each kind the newest first. Default 20; 0 puts none.",
    )
    max_working_memory_tokens: int | None = Field(
        8000,
        description='Budget of the context assembled for one turn, in tokens. Default 8000.',
    )
    min_embedding_tokens: int | None = Field(
        4,
        description='Messages shorter than this many tokens are not embedded. Default 4.',
    )
    pii: PiiPolicy | None = Field(
        'redact',
        description='What is done about PII in messages the caller did not mark, each\nlevel adding to the one before: `off`; `flag` (`contains_pii`);\n`redact` (also a redacted copy, `redacted_content`, with typed\nplaceholders such as `[EMAIL]`); `redact_outgoing` (only redacted\ntext goes to the model and the embedder); `redact_stored` (the\nredacted text is stored in place of the original). Default `redact`.',
    )
    pii_region: PiiRegion | None = Field(
        'US',
        description='The region (ISO 3166 code in capitals: `US`, `GB`, `DE`, ...) whose numbering\nplan reads phone numbers written without a country code, in messages\nas they are stored and as they leave for the model. National numbers\nwith a trunk `0` are also read in 28 other regions. Default `US`.',
    )
    procedure_min_score: float | None = Field(
        0.45,
        description="A procedure without a trigger-pattern match joins the context when\nthe message's meaning is at least this close to its own (cosine).\nDefault 0.45: chosen by 5-fold cross-validation on the labelled set of\n`octopus-bench procedures` (every fold chose it; held-out F1 of\npattern and meaning together 0.67 ± 0.06), for all-MiniLM-L6-v2.",
    )
    procedures_top_k: int | None = Field(
        3,
        description="Procedures put in one turn's context, best matches first. Default 3.",
    )
    profile_max_tokens: int | None = Field(
        0,
        description="Most tokens of a profile block in a turn's context: how long and how\noften the user has talked with the agent, and their newest past\nconversations a line each (the lines go first when it is over, the\noldest first). Default 0: no profile block; at most 4000.",
    )
    profile_summary: bool | None = Field(
        False,
        description="Have the agent's summary model write a paragraph about each user\nfrom their current facts and newest conversations, written again by\nthe memory worker as they talk (a model call each time one of their\nconversations is summarised or facts are learned from it). The\nprofile shows it, and the profile block leads with it, while every\nfact it was written from holds. Default false.",
    )
    retention_days: int | None = Field(
        None,
        description='Episodes older than this are archived by the retention job; none when absent.',
    )
    summarize_on_close: bool | None = Field(
        True,
        description='Summarise an episode (more than 2 messages) when it closes. Default true.',
    )


class MessageErasureReceipt(BaseModel):
    compacted: bool = Field(
        ...,
        description="No removed word is left on disk now. When false, a reader (an export,\na backup) holds back the last step, and the words leave the files'\nlogs as soon as it ends, without delaying anyone's writes.",
    )
    episode_id: UUID = Field(
        ...,
        description='An episode: one session of a conversation, from its first message to its close.',
    )
    facts_deleted: int = Field(
        ...,
        description='Facts learned from the message, deleted with every version of them.',
    )
    message_id: UUID = Field(..., description='One message of an episode.')
    summary_dropped: bool = Field(
        ...,
        description="The episode's summary (and key facts) was dropped: a closed episode's\nis written again from the messages left, by the agent's model when\none answers, or extractively.",
    )
    vectors: int = Field(
        ...,
        description="Memory vectors removed: the message's, its facts', its episode's\nsummary's.",
    )


class NewMessage3(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    agent_id: UUID | None = None
    contains_pii: bool | None = None
    content: str | list[ContentPart1 | ContentPart2 | ContentPart3 | ContentPart4] | None = (
        None
    )
    name: str | None = Field(None, description='The OpenAI `name` of the participant.')
    redacted_content: str | None = None
    role: Role
    timestamp: AwareDatetime | None = Field(
        None,
        description='When the message was said; now when absent (give it when importing).',
    )
    token_count: int | None = Field(
        None, description='Computed by Octopus when absent.'
    )
    tool_call_id: str | None = Field(
        None,
        description='For a `tool` message in the OpenAI shape: the call it answers.',
    )
    tool_calls: list[ToolCallRecord] | None = None


class NewMessage4(NewMessage1, NewMessage3):
    model_config = ConfigDict(
        extra='forbid',
    )
    agent_id: UUID | None = None
    contains_pii: bool | None = None
    content: str | list[ContentPart1 | ContentPart2 | ContentPart3 | ContentPart4] | None
    name: str | None = Field(None, description='The OpenAI `name` of the participant.')
    redacted_content: str | None = None
    role: Role
    timestamp: AwareDatetime | None = Field(
        None,
        description='When the message was said; now when absent (give it when importing).',
    )
    token_count: int | None = Field(
        None, description='Computed by Octopus when absent.'
    )
    tool_call_id: str | None = Field(
        None,
        description='For a `tool` message in the OpenAI shape: the call it answers.',
    )
    tool_calls: list[ToolCallRecord] | None = None


class NewMessage5(NewMessage2, NewMessage3):
    model_config = ConfigDict(
        extra='forbid',
    )
    agent_id: UUID | None = None
    contains_pii: bool | None = None
    content: str | list[ContentPart1 | ContentPart2 | ContentPart3 | ContentPart4] | None = (
        None
    )
    name: str | None = Field(None, description='The OpenAI `name` of the participant.')
    redacted_content: str | None = None
    role: Role
    timestamp: AwareDatetime | None = Field(
        None,
        description='When the message was said; now when absent (give it when importing).',
    )
    token_count: int | None = Field(
        None, description='Computed by Octopus when absent.'
    )
    tool_call_id: str | None = Field(
        None,
        description='For a `tool` message in the OpenAI shape: the call it answers.',
    )
    tool_calls: list[ToolCallRecord]


class Procedure(BaseModel):
    agent_id: UUID | None = None
    approved_by: str | None = Field(
        None, description='Who approved the serving version.'
    )
    created_at: AwareDatetime
    created_by: str | None = Field(
        None,
        description="Who wrote the version shown (an API key's name, or `learned:{episode}`).",
    )
    description: str | None = None
    id: UUID = Field(
        ..., description='A named step-by-step procedure (procedural memory).'
    )
    is_active: bool
    is_approved: bool = Field(
        ..., description='Whether a version serves: only then can the procedure match.'
    )
    latest_version: int = Field(..., description='The newest version.')
    name: str
    pending_version: int | None = Field(
        None, description='The newest version, while it waits for approval.'
    )
    serving_version: int | None = Field(
        None, description='The version that serves, if one was approved.'
    )
    steps: list[ProcedureStep]
    trigger_pattern: str | None = None
    updated_at: AwareDatetime
    version: int = Field(..., description='The version shown here.')


class ProcedureSpec(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    agent_id: UUID | None = None
    description: str | None = None
    name: str
    steps: list[ProcedureStep]
    trigger_pattern: str | None = Field(
        None,
        description="A regular expression over the user's message (Rust `regex` syntax).",
    )


class ProcedureVersion(BaseModel):
    created_at: AwareDatetime
    created_by: str | None = None
    decided_at: AwareDatetime | None = None
    decided_by: str | None = Field(
        None, description='Who approved or rejected it, and when.'
    )
    description: str | None = None
    name: str
    status: VersionStatus
    steps: list[ProcedureStep]
    trigger_pattern: str | None = None
    version: int


class RecallFinding(BaseModel):
    contribution: float = Field(
        ...,
        description="What it added to the fused score: its score scaled as the fusion\nscales its list, times the weight. A hit's contributions sum to its\n`fused` score.",
    )
    looked_for: str | None = Field(
        None,
        description='What the search looked for when it was not the query: the name, the\nsub-question, the words.',
    )
    rank: int = Field(
        ..., description="The memory's place in that search's list, from 1."
    )
    score: float = Field(
        ...,
        description="The search's own score: a cosine similarity by meaning, BM25 by words.",
    )
    search: RecallSearch
    weight: float = Field(..., description="The list's share of the fused score.")


class RecallMove(BaseModel):
    by: RecallReordering
    from_: int = Field(..., alias='from')
    to: int


class Tenant(BaseModel):
    created_at: AwareDatetime
    id: UUID = Field(
        ...,
        description='A tenant: the unit of isolation. Nothing of one tenant is visible to another.',
    )
    name: str


class TenantDeletionReceipt(BaseModel):
    cache: CacheCounts = Field(
        ..., description="Conversation histories held in this server's memory."
    )
    compacted: bool = Field(
        ...,
        description='No removed text is left in the data directory now (see\n[`ForgetReceipt::compacted`]).',
    )
    full_text: FullTextCounts = Field(
        ...,
        description='Entries of the full-text index over messages (those over knowledge\nand facts go with their rows).',
    )
    queue: QueueCounts = Field(
        ..., description='Memory work that was queued for the tenant.'
    )
    relational: TenantRowCounts = Field(
        ..., description='Rows of the relational store.'
    )
    tenant_id: UUID = Field(
        ...,
        description='A tenant: the unit of isolation. Nothing of one tenant is visible to another.',
    )
    vectors: TenantVectorCounts = Field(
        ...,
        description='Vectors removed, and the vector sets erased from the vector index.',
    )


class UserProfile(BaseModel):
    activity: UserActivity | None = None
    agent_id: UUID = Field(
        ..., description='An agent: a configured assistant with its own memory.'
    )
    facts: list[FactGroup] = Field(
        ...,
        description="Every other fact that holds, by category: the agent's\n`fact_categories` in their order, then any other category, then the\nfacts filed under none.",
    )
    instructions: list[ProfileFact] = Field(
        ...,
        description='What they asked for every later turn ("always answer in French"),\nthe newest first.',
    )
    preferences: list[ProfileFact] = Field(
        ..., description='What they said they prefer, the newest first.'
    )
    recent_episodes: list[EpisodeLine] = Field(
        ...,
        description='The newest past conversations with a summary (up to 5), newest\nfirst, a line each.',
    )
    summary: ProfileSummary | None = None
    user_id: str


class Agent(BaseModel):
    created_at: AwareDatetime
    id: UUID = Field(
        ..., description='An agent: a configured assistant with its own memory.'
    )
    is_active: bool = Field(
        ...,
        description='Inactive agents are hidden from lists and take no new conversations.',
    )
    llm: LlmConfig
    memory: MemoryConfig
    name: str
    system_prompt: str
    updated_at: AwareDatetime


class AgentSpec(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    llm: LlmConfig
    memory: MemoryConfig | None = None
    name: str
    system_prompt: str | None = None


class AppendMessagesRequest(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    messages: list[NewMessage4 | NewMessage5]


class ChatCompletionRequest(BaseModel):
    messages: list[ChatMessage] = Field(
        ..., description='The conversation as the client holds it; only its end is new.'
    )
    model: str = Field(..., description='The agent: its name, or its id.')
    stream: bool | None = Field(
        None,
        description='Answer with `chat.completion.chunk` server-sent events, ending with\n`data: [DONE]`.',
    )
    stream_options: StreamOptions | None = None
    tools: list[ChatTool] | None = Field(None, description='Tools the model may call.')
    user: str | None = Field(
        None, description='The user; or send the `x-octopus-user` header.'
    )


class ErrorBody(BaseModel):
    error: ErrorDetail


class ImportedMessage3(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    agent_id: UUID | None = None
    contains_pii: bool | None = None
    content: str | list[ContentPart1 | ContentPart2 | ContentPart3 | ContentPart4] | None = (
        None
    )
    name: str | None = Field(None, description='The OpenAI `name` of the participant.')
    redacted_content: str | None = None
    role: Role
    timestamp: AwareDatetime
    token_count: int | None = Field(
        None, description='Computed by Octopus when absent.'
    )
    tool_call_id: str | None = Field(
        None,
        description='For a `tool` message in the OpenAI shape: the call it answers.',
    )
    tool_calls: list[ToolCallRecord] | None = None


class ImportedMessage4(ImportedMessage1, ImportedMessage3):
    model_config = ConfigDict(
        extra='forbid',
    )
    agent_id: UUID | None = None
    contains_pii: bool | None = None
    content: str | list[ContentPart1 | ContentPart2 | ContentPart3 | ContentPart4] | None
    name: str | None = Field(None, description='The OpenAI `name` of the participant.')
    redacted_content: str | None = None
    role: Role
    timestamp: AwareDatetime
    token_count: int | None = Field(
        None, description='Computed by Octopus when absent.'
    )
    tool_call_id: str | None = Field(
        None,
        description='For a `tool` message in the OpenAI shape: the call it answers.',
    )
    tool_calls: list[ToolCallRecord] | None = None


class ImportedMessage5(ImportedMessage2, ImportedMessage3):
    model_config = ConfigDict(
        extra='forbid',
    )
    agent_id: UUID | None = None
    contains_pii: bool | None = None
    content: str | list[ContentPart1 | ContentPart2 | ContentPart3 | ContentPart4] | None = (
        None
    )
    name: str | None = Field(None, description='The OpenAI `name` of the participant.')
    redacted_content: str | None = None
    role: Role
    timestamp: AwareDatetime
    token_count: int | None = Field(
        None, description='Computed by Octopus when absent.'
    )
    tool_call_id: str | None = Field(
        None,
        description='For a `tool` message in the OpenAI shape: the call it answers.',
    )
    tool_calls: list[ToolCallRecord]


class ImportedSession(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    messages: list[ImportedMessage4 | ImportedMessage5] = Field(
        ..., description='In order; each with its original `timestamp`.'
    )


class ItemsAgent(BaseModel):
    items: list[Agent]


class ItemsKnowledgeHit(BaseModel):
    items: list[KnowledgeHit]


class ItemsProcedure(BaseModel):
    items: list[Procedure]


class ItemsProcedureVersion(BaseModel):
    items: list[ProcedureVersion]


class ItemsTenant(BaseModel):
    items: list[Tenant]


class Message(BaseModel):
    agent_id: UUID | None = None
    contains_pii: bool
    content: str | list[ContentPart1 | ContentPart2 | ContentPart3 | ContentPart4] | None = (
        None
    )
    conversation_id: UUID = Field(
        ...,
        description='A conversation: the long-lived thread between one user and one agent.',
    )
    created_at: AwareDatetime
    embedding_ref: str | None = Field(
        None,
        description="The id of this message's vector in the vector store, once embedded.",
    )
    episode_id: UUID = Field(
        ...,
        description='An episode: one session of a conversation, from its first message to its close.',
    )
    id: UUID = Field(..., description='One message of an episode.')
    name: str | None = None
    ordinal: int = Field(..., description='Position in the episode, from 0.')
    redacted_content: str | None = None
    role: Role
    timestamp: AwareDatetime
    token_count: int
    tool_call_id: str | None = None
    tool_calls: list[ToolCallRecord]
    usage: Usage | None = None


class MessageHit(BaseModel):
    agent_id: UUID = Field(
        ..., description='An agent: a configured assistant with its own memory.'
    )
    message: Message
    score: float = Field(..., description='BM25 relevance: higher is better.')
    user_id: str


class MessageWindow(BaseModel):
    after: list[Message] = Field(
        ..., description='Up to the requested number of later turns, oldest first.'
    )
    before: list[Message] = Field(
        ..., description='Up to the requested number of earlier turns, oldest first.'
    )
    message: Message


class RecallExplanation(BaseModel):
    found_by: list[RecallFinding] = Field(
        ...,
        description='Every search that found it, best contribution first. Empty for a\nturn no search found, brought in next to one that was.',
    )
    fused: float = Field(
        ..., description="The fusion's score: the sum of the contributions."
    )
    fusion: Fusion = Field(..., description="How the searches' lists were combined.")
    in_context: float = Field(
        ...,
        description="The score once ranked in context: the fused score raised by a share\nof its best neighbouring turn's and of its episode's best.",
    )
    moved: list[RecallMove] = Field(
        ...,
        description='Each reordering that changed its place, in the order they ran.',
    )


class RecallHit(BaseModel):
    at: AwareDatetime
    conversation_id: UUID | None = None
    episode_id: UUID | None = None
    explanation: RecallExplanation | None = None
    fact: Fact | None = None
    keyword_score: float | None = Field(
        None, description='BM25, when the full-text search found it.'
    )
    kind: MemoryKind
    score: float = Field(
        ...,
        description="The final score, higher is better: the retrievers' scores fused, then\nraised by the neighbouring turns and the episode (see\n`recall_ranking`), then weighted by recency when asked.",
    )
    summary: str | None = Field(
        None, description="For a summary hit: the episode's summary."
    )
    text: str | None = Field(
        None,
        description="What the memory says, whatever its kind: the message's words, the\nsummary, or the fact (`jq '.items[].text'`).",
    )
    times_said: int | None = Field(
        None,
        description="How many of the speaker's messages said these words (the same words\nwhatever their case, spacing and final `.`, `!` or `?`): a message\nsaid more than once is one hit, the newest time it was said.",
    )
    vector_score: float | None = Field(
        None, description='Cosine similarity, when the vector search found it.'
    )
    window: MessageWindow | None = None


class TurnReply(BaseModel):
    episode_id: UUID = Field(
        ...,
        description='An episode: one session of a conversation, from its first message to its close.',
    )
    finish_reason: str | None = None
    model: str
    provider: str = Field(..., description='The provider and the model that answered.')
    reply: Message = Field(
        ..., description="The model's reply, as stored (with `usage`)."
    )
    stored_message_ids: list[UUID] = Field(
        ...,
        description="Messages this request stored before the model was called: the user's\nmessage, or the tool results.",
    )
    tool_calls: list[ToolCall] = Field(
        ...,
        description='Tools the model asks the caller to run; continue the turn with their\nresults. Empty when the reply is final.',
    )
    trace: ContextTrace = Field(
        ...,
        description='What memory the turn used: retrieved items with scores, what was\npruned, tokens per block.',
    )
    usage: Usage


class AppendBody(RootModel[AppendMessagesRequest | NewMessage4 | NewMessage5]):
    root: AppendMessagesRequest | NewMessage4 | NewMessage5 = Field(
        ...,
        description='What an append takes: a batch of messages, or one message by itself\n(without the `messages` wrapper).',
    )


class AppendedMessages(BaseModel):
    messages: list[Message] = Field(
        ..., description='The stored messages, with their ids, episodes and ordinals.'
    )


class ContextCandidate(BaseModel):
    block: Block
    fate: CandidateFate
    id: str = Field(
        ...,
        description="The id the trace names it by: a procedure's, a fact's, a chunk's, a\nmessage's, an episode's.",
    )
    kept: bool = Field(..., description='Whether its words are in the context.')
    recall: RecallExplanation | None = None
    redacted: list[PiiKind] | None = Field(
        None,
        description="The personal data replaced in what went out (the agent's `pii`\npolicy redacts outgoing text), by kind.",
    )
    score: float | None = Field(
        None,
        description="Its score as the pruning compared it (each block's best 1); absent\nfor a recalled memory that was not an item of its own.",
    )
    shown_in: str | None = Field(
        None,
        description='For a recalled memory shown with another: the id of the passage.',
    )


class ContextExplanation(BaseModel):
    candidates: list[ContextCandidate] = Field(
        ...,
        description="Every candidate offered, block by block in the context's order,\neach block's in the order offered (recalled memories best first).",
    )


class ContextResponse(BaseModel):
    episode_id: UUID | None = None
    explanation: ContextExplanation | None = None
    messages: list[ChatMessage] = Field(
        ...,
        description="Ready for any chat-completions API: system prompt, retrieved knowledge,\nepisodic snippets, history, and the user's message.",
    )
    tokenizer: str
    trace: ContextTrace = Field(
        ...,
        description='What was retrieved with its scores, what was pruned, tokens per block.',
    )


class ConversationImport(BaseModel):
    model_config = ConfigDict(
        extra='forbid',
    )
    agent_id: UUID = Field(
        ..., description='An agent: a configured assistant with its own memory.'
    )
    metadata: dict[str, Any] | None = None
    sessions: list[ImportedSession]
    title: str | None = None
    user_id: str


class EpisodeWithMessages(Episode):
    messages: list[Message]


class ItemsMessageHit(BaseModel):
    items: list[MessageHit]


class ItemsRecallHit(BaseModel):
    items: list[RecallHit]
