// Writes src/schema.ts, the API's types, from the server's /openapi.json with
// openapi-typescript; or, with --check, fails when it is not current.
//
//   node scripts/generate.mjs http://127.0.0.1:7700/openapi.json [--check]
//
// The document's bounds (lengths, ranges, patterns) are left out, as in the
// Python client: they are the server's settings, and the server checks them.

import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

import openapiTS, { astToString } from "openapi-typescript";

export const SCHEMA = fileURLToPath(new URL("../src/schema.ts", import.meta.url));

const BOUNDS = new Set([
  "maxLength", "minLength", "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum",
  "maxItems", "minItems", "pattern",
]);

function withoutBounds(value) {
  if (Array.isArray(value)) return value.map(withoutBounds);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).filter(([key]) => !BOUNDS.has(key)).map(([key, v]) => [key, withoutBounds(v)]),
    );
  }
  return value;
}

/** The text of src/schema.ts for an OpenAPI document. */
export async function schemaSource(document) {
  return astToString(await openapiTS(withoutBounds(document)));
}

async function main() {
  const [source, flag] = process.argv.slice(2);
  if (!source) throw new Error("usage: generate.mjs <openapi.json URL or file> [--check]");
  const document = source.startsWith("http")
    ? await (await fetch(source)).json()
    : JSON.parse(await readFile(source, "utf8"));
  const text = await schemaSource(document);
  if (flag === "--check") {
    if ((await readFile(SCHEMA, "utf8")) !== text) {
      console.error("src/schema.ts is not current: run scripts/generate.mjs");
      process.exit(1);
    }
  } else {
    await writeFile(SCHEMA, text);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
