// Builds build/harness/: the panel bundled for the browser (with the
// obsidian stub and fixture data) and one HTML page per scenario, styled
// with Obsidian-like dark theme variables plus the plugin's styles.css.
//   node scripts/harness.mjs   -> prints the pages it wrote
import esbuild from "esbuild";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";

const OUT = "build/harness";

export const SCENARIOS = [
	{ name: "digest", note: "digest/wiki/hybrid-search.md", daemon: "up" },
	{ name: "daily-failed", note: "daily/2026-06-19.md", daemon: "up" },
	{ name: "daily-settling", note: "daily/2026-06-21.md", daemon: "up" },
	{ name: "daemon-down", note: "digest/wiki/hybrid-search.md", daemon: "down" },
];

// Values close to Obsidian's default dark theme, so the screenshots show
// how the plugin's variable-only styles land in a real vault.
const THEME = `
body {
	--background-primary: #1e1e1e;
	--background-primary-alt: #242424;
	--background-secondary: #262626;
	--background-secondary-alt: #363636;
	--background-modifier-border: #363636;
	--background-modifier-hover: rgba(255, 255, 255, 0.075);
	--text-normal: #dadada;
	--text-muted: #b3b3b3;
	--text-faint: #666666;
	--text-error: #fb464c;
	--text-accent: #a88bfa;
	--text-on-accent: #ffffff;
	--interactive-normal: #363636;
	--interactive-hover: #3f3f3f;
	--interactive-accent: #7f6df2;
	--interactive-accent-hover: #8875ff;
	--color-red: #fb464c;   --color-red-rgb: 251, 70, 76;
	--color-green: #44cf6e; --color-green-rgb: 68, 207, 110;
	--color-yellow: #e0de71;
	--color-blue: #027aff;
	--color-cyan: #53dfdd;
	--code-background: #262626;
	--font-interface: "Inter", "Liberation Sans", "DejaVu Sans", sans-serif;
	--font-monospace: "Liberation Mono", "DejaVu Sans Mono", monospace;
	--font-ui-smaller: 12px;
	--font-ui-small: 13px;
	--font-semibold: 600;
	--font-bold: 700;
	--size-2-2: 4px;
	--size-4-1: 4px; --size-4-2: 8px; --size-4-3: 12px; --size-4-4: 16px; --size-4-8: 32px;
	--radius-s: 4px; --radius-m: 8px; --radius-l: 12px;
	--cursor-link: pointer;
	color-scheme: dark; /* dark native scrollbars, as Obsidian's themed ones */
	margin: 0;
	background: var(--background-secondary);
	color: var(--text-normal);
	font-family: var(--font-interface);
	font-size: 14px;
}
/* The bits of Obsidian's own chrome the panel sits in. */
#sidebar { height: 100vh; background: var(--background-primary); border-left: 1px solid var(--background-modifier-border); }
.workspace-leaf-content { display: flex; flex-direction: column; height: 100%; }
.view-header { display: flex; align-items: center; height: 36px; padding: 0 12px; border-bottom: 1px solid var(--background-modifier-border); }
.view-header-title { font-size: var(--font-ui-small); font-weight: var(--font-semibold); color: var(--text-normal); }
.view-content { flex: 1; overflow-y: auto; }
h4 { font-size: 1.1em; }
a.internal-link { color: var(--text-accent); text-decoration: underline; text-decoration-color: rgba(168, 139, 250, 0.4); }
button { font: inherit; font-size: var(--font-ui-small); padding: 4px 12px; border: 0; border-radius: var(--radius-s);
	background: var(--interactive-normal); color: var(--text-normal); box-shadow: 0 1px 1px rgba(0,0,0,0.3); cursor: pointer; }
button.mod-cta { background: var(--interactive-accent); color: var(--text-on-accent); }
code { font-family: var(--font-monospace); background: var(--code-background); padding: 1px 4px; border-radius: var(--radius-s); color: #e0a46f; }
`;

mkdirSync(OUT, { recursive: true });
await esbuild.build({
	entryPoints: ["scripts/harness-entry.ts"],
	outfile: `${OUT}/harness.js`,
	bundle: true,
	format: "iife",
	platform: "browser",
	target: "chrome110",
	alias: { obsidian: "./tests/obsidian-stub.ts" },
	logLevel: "warning",
});

const styles = readFileSync("styles.css", "utf8");
for (const s of SCENARIOS) {
	const html = `<!doctype html>
<html><head><meta charset="utf-8"><title>vaultlink panel: ${s.name}</title>
<style>${THEME}</style>
<style>/* plugin styles.css */
${styles}</style>
</head>
<body class="theme-dark" data-note="${s.note}" data-daemon="${s.daemon}">
<div id="sidebar"></div>
<script src="harness.js"></script>
</body></html>
`;
	const file = resolve(OUT, `${s.name}.html`);
	writeFileSync(file, html);
	console.log(file);
}
