#!/usr/bin/env node
// The screenshots in share/examples/ (shown in the README), made with
// Debian's headless Chromium:
//   node tests/browser/screenshots.js PSVG_BINARY CONFORMANCE_DIR OUT_DIR
// psvg-flamegraph: the bundled demo recording (share/demo/perf-demo.txt.gz);
// psvg-zoom-search: the same, zoomed into a thread, searching "^(compress|checksum)$";
// psvg-diff: FlameGraph's differential test profile (cksum, cycles vs
// instructions; CDDL, see ../shared/conformance/README.md);
// psvg-python: share/examples/python-merged.sp, made with
//   pcollect --python-lines=no -o python-merged.sp -- python3.12 tests/progs/t61-shares.py 3
// (pyenv's 3.12: two threads, Python frames merged with the native ones).
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { launch } = require('./chromium');

const [psvg, conf, out] = process.argv.slice(2).map((p) => path.resolve(p));
const top = path.resolve(__dirname, '../..');
fs.mkdirSync(out, { recursive: true });
const demo = path.join(out, 'psvg-flamegraph.svg');
execFileSync(psvg, ['--title', 'psvg: the stackpipe demo (perf record -g, two threads)', '--weight', 'samples', '-o', demo,
	path.join(top, 'share/demo/perf-demo.txt.gz')]);
const py = path.join(out, 'psvg-python.svg');
execFileSync(psvg, ['--title', 'psvg: Python and native frames in one stack (pcollect, CPython 3.12)', '--colors=python', '-o', py,
	path.join(top, 'share/examples/python-merged.sp')]);
const diff = path.join(out, 'psvg-diff.svg');
execFileSync(psvg, ['--title', 'psvg: differential (cksum: cycles -> instructions)', '-o', diff,
	path.join(conf, 'inferno/svg-differential/input.folded')]);

(async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'psvg-shots-'));
	const ctx = await launch(dir, { width: 1200, height: 800 });
	const page = await ctx.newPage();
	const shot = async (file, png, setup) => {
		await page.goto('file://' + file);
		await page.waitForFunction(() => window.spflame && window.spflame.api);
		if (setup) await setup();
		const h = await page.evaluate(() => spflame.api.state().height);
		await page.setViewportSize({ width: 1200, height: Math.ceil(h) });
		await page.screenshot({ path: path.join(out, png), clip: { x: 0, y: 0, width: 1200, height: Math.ceil(h) } });
	};
	await shot(demo, 'psvg-flamegraph.png');
	await shot(demo, 'psvg-zoom-search.png', async () => {
		const i = await page.evaluate(() => {
			let best = 1;
			for (let k = 1; k < spflame.n; k++) if (spflame.api.name(k) === 'worker-1') { best = k; break; }
			return best;
		});
		const b = await page.evaluate((i) => spflame.api.box(i), i);
		await page.mouse.click(b.x + b.w / 2, b.y + b.h / 2);
		await page.evaluate(() => spflame.api.search('^(compress|checksum)$'));
		const c = await page.evaluate((i) => spflame.api.box(i + 1), i);
		await page.mouse.move(c.x + Math.min(c.w / 2, 300), c.y + c.h / 2);
	});
	await shot(diff, 'psvg-diff.png', async () => {
		const b = await page.evaluate(() => spflame.api.box(spflame.api.find('__GI___fread_unlocked')));
		await page.mouse.move(b.x + Math.min(b.w / 2, 400), b.y + b.h / 2);
	});
	await shot(py, 'psvg-python.png', async () => {
		const b = await page.evaluate(() => spflame.api.box(spflame.api.find('zlib_compress')));
		await page.mouse.move(b.x + Math.min(b.w / 2, 300), b.y + b.h / 2);
	});
	await ctx.close();
	fs.rmSync(dir, { recursive: true, force: true });
})();
