// Bundles the UI into web/dist (embedded into the server binary by crates/server/build.rs).
import * as esbuild from 'esbuild';
import { mkdirSync, copyFileSync, rmSync } from 'node:fs';

const watch = process.argv.includes('--watch');
rmSync('dist', { recursive: true, force: true });
mkdirSync('dist', { recursive: true });
copyFileSync('src/index.html', 'dist/index.html');
const opts = {
  entryPoints: { app: 'src/main.ts', style: 'src/style.css' },
  outdir: 'dist',
  bundle: true,
  minify: !watch,
  sourcemap: false,
  target: ['es2020'],
  format: 'esm',
  loader: { '.svg': 'dataurl' },
  logLevel: 'info',
};
if (watch) {
  const ctx = await esbuild.context(opts);
  await ctx.watch();
} else {
  await esbuild.build(opts);
}
