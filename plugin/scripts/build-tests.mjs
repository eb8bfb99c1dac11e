// Bundles each tests/*.test.ts into build/tests/*.test.js for `node --test`,
// with 'obsidian' swapped for the hand-written stub. Bundling (rather than a
// TS loader) keeps the runtime plain Node 20 and the result line node's own.
import esbuild from "esbuild";
import { readdirSync, rmSync } from "node:fs";

const entryPoints = readdirSync("tests")
	.filter((f) => f.endsWith(".test.ts"))
	.map((f) => `tests/${f}`);

rmSync("build/tests", { recursive: true, force: true });
await esbuild.build({
	entryPoints,
	outdir: "build/tests",
	bundle: true,
	platform: "node",
	format: "cjs",
	target: "node20",
	alias: { obsidian: "./tests/obsidian-stub.ts" },
	sourcemap: "inline",
	logLevel: "warning",
});
console.log(`bundled ${entryPoints.length} test files into build/tests/`);
