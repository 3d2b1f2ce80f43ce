// The client follows the server's own /openapi.json: every operation has a
// method, src/schema.ts is what the document makes today, and dist/ is what
// src/ compiles to.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { Octopus } from "octopus-client";

import { SCHEMA, schemaSource } from "../scripts/generate.mjs";
import { url } from "./helpers.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const document = async () => (await fetch(`${url()}/openapi.json`)).json();
const camel = (name) => name.replace(/_([a-z])/g, (_, letter) => letter.toUpperCase());

test("every operation of the API has a method", async () => {
  const missing = [];
  for (const [path, item] of Object.entries((await document()).paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const name = camel(operation.operationId);
      if (typeof Octopus.prototype[name] !== "function") missing.push(`${name} (${method.toUpperCase()} ${path})`);
    }
  }
  assert.deepEqual(missing, [], "the client lacks these operations");
});

test("src/schema.ts is what the server's document makes", async () => {
  const wanted = await schemaSource(await document());
  assert.ok(readFileSync(SCHEMA, "utf8") === wanted, "src/schema.ts is not current: run scripts/generate.mjs");
});

test("dist/ is what src/ compiles to", () => {
  const out = mkdtempSync(join(tmpdir(), "octopus-client-dist-"));
  execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", root, "--outDir", out], {
    stdio: "pipe",
  });
  const built = readdirSync(out).sort();
  assert.deepEqual(readdirSync(join(root, "dist")).sort(), built);
  for (const file of built) {
    assert.ok(
      readFileSync(join(out, file), "utf8") === readFileSync(join(root, "dist", file), "utf8"),
      `dist/${file} is not current: run npm run build`,
    );
  }
});
