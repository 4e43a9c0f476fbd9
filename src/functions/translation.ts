import { Type } from "@sinclair/typebox";
import { defineFunction } from "./define";
import { option } from "./prompt";
import { InputLanguage, LanguageCode, Model, Result, Short, Text } from "./schemas";

const request = Type.Object({
  text: Text("the text to translate"),
  target_language: Short("language to translate into: a name (German) or a code (de)", 64),
  source_language: InputLanguage("text"),
  // The spec names this field without a type; as its notation says, it is taken as text.
  translate: Type.Optional(
    Type.String({ maxLength: 2000, description: "what to translate or leave as is, e.g. 'keep product names in English'" }),
  ),
  model: Model(),
});

const result = Result(
  {
    translated_text: Type.String({ description: "the translation" }),
    source_language: LanguageCode(),
    target_language: LanguageCode(),
  },
  "the translated text and both languages",
);

export default defineFunction({
  name: "translation",
  summary: "Translate a text into another language",
  request,
  result,
  role: "You are a professional translator.",
  brief: (req) => ({
    rules: [
      `Translate the text into ${req.target_language}.`,
      req.source_language ? `The text is in ${req.source_language}.` : "Detect the language of the text.",
      "Keep meaning, tone, formatting, line breaks, numbers, URLs, e-mail addresses and placeholders such as {name} intact.",
      "Do not add explanations, notes or quotes around the translation.",
      option("What to translate", req.translate),
    ],
    inputs: [["text", req.text]],
  }),
  example: {
    request: { text: "Where is the nearest train station?", target_language: "de" },
    result: { translated_text: "Wo ist der nächste Bahnhof?", source_language: "en", target_language: "de" },
  },
});
