// Bundle the extension (Node, vscode external) and the webview script (browser, IIFE).
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");
await esbuild.build({
  entryPoints: ["src/extension.ts"],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"],
  outfile: "dist/extension.js",
  sourcemap: !production,
  minify: production,
  logLevel: "warning",
});
// The pure modules on their own, for the unit tests (not in the .vsix: .vscodeignore lists what is).
await esbuild.build({
  entryPoints: ["src/hunks.ts", "src/merge.ts", "src/rewind.ts", "src/context.ts", "src/files.ts", "src/input.ts"],
  bundle: true,
  external: ["vscode", "vscode-jsonrpc", "vscode-jsonrpc/node"],
  platform: "node",
  format: "cjs",
  target: "node20",
  outdir: "dist/lib",
  logLevel: "warning",
});
await esbuild.build({
  entryPoints: ["media/main.js"],
  bundle: true,
  platform: "browser",
  format: "iife",
  target: "es2022",
  outfile: "dist/webview.js",
  minify: production,
  logLevel: "warning",
});
