/**
 * Request and result schemas of the knowledge routes and functions, and the limits they enforce.
 * A body over a limit is a 400 invalid_request whose `param` names the field.
 */
import { type Static, Type } from "@sinclair/typebox";

/**
 * The default relevance floor: none. Search is recall-first (CONTRACT section 5): every chunk that
 * shares a meaningful word with the query (or, in hybrid search, is close to it in meaning) may be
 * returned, best first, and `min_score` raises the floor. Until 2026-11-26 lexical search left out
 * hits under 0.3 by default, which hid answers whenever a query held a word the documents never
 * use (an order number, a brand, a typo); deciding that nothing answers is faq-match's and the
 * support chatbot's job (functions/chatbot-answer.ts), on calibrated confidence. docs/knowledge.md has the
 * figures with and without the old floor.
 */
export const DEFAULT_MIN_SCORE = 0;

/** The floor lexical search applied by default until 2026-11-26: the eval still reports figures at it. */
export const FORMER_MIN_SCORE = 0.3;

export const LIMITS = {
  knowledgeBasesPerAccount: 100,
  documentsPerKnowledgeBase: 10_000,
  chunksPerKnowledgeBase: 100_000,
  documentsPerRequest: 100,
  documentChars: 100_000,
  inlineDocuments: 1_000,
  metadataKeys: 32,
  faqCollectionsPerAccount: 100,
  faqsPerCollection: 1_000,
  chatbotsPerAccount: 100,
  knowledgeBasesPerChatbot: 10,
  topK: 50,
} as const;

/** A text's pattern: at least one character that is not a blank (validate.ts says so in words). */
export const NOT_BLANK = "\\S";

export const KB_STATUSES = ["active", "inactive"] as const;
export const CHATBOT_MODES = ["support", "assistant"] as const;

/** a name with a character other than blanks ("   " was taken as a knowledge base's name) */
const Name = (what: string) =>
  Type.String({ minLength: 1, maxLength: 200, pattern: NOT_BLANK, description: `name of the ${what}` });

export const MetadataValue = Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean()]);

export const Metadata = Type.Record(Type.String({ minLength: 1, maxLength: 64 }), MetadataValue, {
  maxProperties: LIMITS.metadataKeys,
  description: "key-value pairs (string, number or boolean values) that search can filter on",
});

/** A document: plain text, or a titled one with metadata. */
export const DocumentInput = Type.Union([
  Type.String({ minLength: 1, maxLength: LIMITS.documentChars }),
  Type.Object({
    title: Type.Optional(Type.String({ maxLength: 500, description: "title or file name, returned with search results" })),
    content: Type.String({ minLength: 1, maxLength: LIMITS.documentChars }),
    metadata: Type.Optional(Metadata),
  }),
]);
export type DocumentInput = Static<typeof DocumentInput>;

/** Equality per key; an array value matches any of its values. */
export const FilterMetadata = Type.Record(
  Type.String({ minLength: 1, maxLength: 64 }),
  Type.Union([MetadataValue, Type.Array(MetadataValue, { minItems: 1, maxItems: 50 })]),
  { maxProperties: 16, description: "only documents whose metadata has these values (an array value: any of them)" },
);
export type FilterMetadata = Static<typeof FilterMetadata>;

export const Query = Type.String({ minLength: 1, maxLength: 2000, description: "what to search for, in natural language" });
export const MinScore = Type.Number({
  minimum: 0,
  maximum: 1,
  description: `leave out snippets scoring below this; default ${DEFAULT_MIN_SCORE}: search is recall-first, every snippet sharing a meaningful word with the query (or, with an embedding provider, close to it in meaning) may be returned, and an unknown word in the query lowers scores without hiding what the other words find. The score is the share of the query a passage covers (each query word counts once; a word the searched documents never use counts up to twice, less for everyday words), times 0.5-1 for its BM25 rank relative to the best hit, times the square root of the share of the query's rarity-weighted words the documents contain at all. Hybrid search raises a lexical match's score to its 0.8 : 0.2 blend with the cosine similarity of the embeddings when that is higher, never lowers it, and ranks lexical matches above snippets found by embedding alone (scored 0.2 x similarity)`,
});
export const TopK = Type.Integer({ minimum: 1, maximum: LIMITS.topK, default: 5, description: "number of snippets; default 5" });

export const CreateKnowledgeBase = Type.Object({
  name: Name("knowledge base"),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  status: Type.Optional(
    Type.Union(
      KB_STATUSES.map((s) => Type.Literal(s)),
      { description: "active (default) or inactive; an inactive knowledge base is kept but not searched by chatbots" },
    ),
  ),
});

export const UpdateKnowledgeBase = Type.Partial(CreateKnowledgeBase);

export const AddDocuments = Type.Object({
  documents: Type.Optional(Type.Array(DocumentInput, { minItems: 1, maxItems: LIMITS.documentsPerRequest })),
  /** one document may also be sent as the body itself */
  title: Type.Optional(Type.String({ maxLength: 500 })),
  content: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.documentChars })),
  metadata: Type.Optional(Metadata),
});

export const FaqPair = Type.Object({
  question: Type.String({ minLength: 1, maxLength: 1000 }),
  answer: Type.String({ minLength: 1, maxLength: 10_000 }),
});

export const CreateFaqCollection = Type.Object({
  name: Name("FAQ collection"),
  faqs: Type.Array(FaqPair, { minItems: 1, maxItems: LIMITS.faqsPerCollection }),
});

export const CreateChatbot = Type.Object({
  name: Name("chatbot"),
  mode: Type.Union(
    CHATBOT_MODES.map((m) => Type.Literal(m)),
    { description: "support: answers only from its knowledge bases; assistant: general, grounded in them when it has any" },
  ),
  knowledge_base_ids: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: LIMITS.knowledgeBasesPerChatbot, uniqueItems: true }),
  ),
});

export const ListQuery = { defaultLimit: 20, maxLimit: 100 } as const;

/** One search hit as clients see it. */
export const Snippet = Type.Object(
  {
    title: Type.Union([Type.String(), Type.Null()], { description: "the document's title or file name" }),
    content: Type.String({ description: "the matching passage" }),
    score: Type.Number({ minimum: 0, maximum: 1, description: "relevance from 0 to 1 (how it is computed: min_score)" }),
    document_id: Type.Union([Type.String(), Type.Null()]),
    knowledge_base_id: Type.Optional(Type.String()),
    document_index: Type.Optional(
      Type.Integer({ minimum: 0, description: "inline search: position of the document in the request" }),
    ),
    metadata: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: false },
);
export type Snippet = Static<typeof Snippet>;
