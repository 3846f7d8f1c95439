#!/usr/bin/env node
// psvg --heatmap in Debian's headless Chromium (playwright-core):
//
//   node tests/browser/heatmap.test.js PSVG SP_DUMP STREAM [PNG]
//
// STREAM is a pcollect recording of tests/progs/t80-phases.c "bursts": a
// 0.4 s CPU burst in burst_work every 2 s, idle in between.  Checks: the hot
// cells are the burst rows of every other column; clicking a start and an
// end cell draws a flame graph whose total equals the samples sp-dump
// finds in exactly those slices; zoom, search and Esc work; no script
// errors.  With PNG, a screenshot of the map and a selection is saved there.
// Prints one line per check: "ok - ...", "not ok - ..." or "skip - ... # why".
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const [psvg, spdump, stream, png] = process.argv.slice(2);
const { launch, needPlaywright, tap } = require('./chromium');
needPlaywright('heatmap browser tests');
const t = tap('heatmap browser');
const { ok, notok, check } = t;


const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'heatmap-browser-'));
const svgFile = path.join(tmp, 'heat.svg');
execFileSync(psvg, ['--heatmap', '--title', 'psvg --heatmap: a CPU burst every 2 s', '-o', svgFile, stream]);
// The samples' times, independently of psvg: sp-dump's "t=NS".
const times = execFileSync(spdump, [stream], { maxBuffer: 1 << 28 }).toString().split('\n')
	.filter((l) => l.startsWith('sample ')).map((l) => BigInt(l.match(/ t=(\d+)/)[1]));
const t0 = times.reduce((a, b) => (b < a ? b : a));
const ROWS = 50, SLICE = 1000000000n / BigInt(ROWS);
const slices = times.map((t) => Number((t - t0) / SLICE));
const inSlices = (a, b) => slices.filter((s) => s >= a && s <= b).length;

(async () => {
	const dir = fs.mkdtempSync(path.join(tmp, 'profile-'));
	const ctx = await launch(dir, { width: 1200, height: 900 });
	const page = await ctx.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	await page.goto('file://' + svgFile);
	await page.waitForFunction(() => window.spheat && window.spheat.api, null, { timeout: 20000 });
	const st0 = await page.evaluate(() => spheat.api.state());
	const wantCols = Math.floor(Math.max(...slices) / ROWS) + 1;
	check(`the map has a column per second (${wantCols}) and 50 rows`, st0.rows === ROWS && st0.cols === wantCols,
		`cols ${st0.cols}, rows ${st0.rows}`);
	// hot cells: where the samples are, by the map's own counts and colours
	const cells = await page.evaluate(() => {
		const r = document.getElementById('cells').getElementsByTagName('rect'), out = [];
		for (let c = 0; c < r.length; c++) out.push([spheat.api.count(c), r[c].getAttribute('fill')]);
		return out;
	});
	let total = 0, burst = 0, hotCells = 0, hotInBurst = 0;
	cells.forEach(([n, fill], c) => {
		const col = Math.floor(c / ROWS), row = c % ROWS;
		const inBurst = col % 2 === 0 && row < 25; // 0.4 s bursts: the first 20 of 50 rows, with slack
		total += n;
		if (inBurst) burst += n;
		if (fill !== '#ffffff') { hotCells++; if (inBurst) hotInBurst++; }
		if ((n > 0) !== (fill !== '#ffffff')) notok(`cell ${c}: colour ${fill} for ${n} samples`);
	});
	check(`the map's cells hold every sample (${total})`, total === times.length, `${total} of ${times.length}`);
	check(`hot cells are in the burst rows of every other second (${hotInBurst} of ${hotCells} cells, ` +
		`${(100 * burst / total).toFixed(0)}% of samples)`, hotCells > 0 && burst >= 0.8 * total && hotInBurst >= 0.8 * hotCells);
	// the first burst's heaviest cell as start, the second burst's last non-empty cell as end
	let a = -1, b = -1;
	cells.forEach(([n], c) => { if (n && a < 0) a = c; });
	cells.forEach(([n], c) => { if (n && Math.floor(c / ROWS) <= 2 + Math.floor(a / ROWS)) b = c; });
	if (a < 0 || b <= a) { notok('two cells to select', `a ${a}, b ${b}`); } else {
		const rect = (c) => page.locator('#cells rect').nth(c);
		await rect(a).click();
		await rect(b).click();
		const st = await page.evaluate(() => spheat.api.state());
		const want = inSlices(a, b);
		check(`clicking cell ${a} then ${b}: a flame graph of ${st.total} samples = sp-dump's ${want} in those slices`,
			st.start === a && st.end === b && st.total === want && st.drawn > 3, JSON.stringify(st));
		const frames = await page.evaluate(() => spheat.api.frames());
		const bw = frames.find((f) => f[0] === 'burst_work');
		check('the graph has burst_work, under the thread name', bw && frames.some((f) => f[0] === 'phases'),
			JSON.stringify(frames.slice(0, 8)));
		const selected = await page.evaluate(() => document.querySelectorAll('#cells rect.sel').length);
		check(`the selected cells are outlined (${selected})`, selected === b - a + 1);
		// zoom by clicking the burst_work frame, Esc back
		const box = await page.evaluate(() => {
			for (const g of document.getElementById('flame').children)
				if (g.textContent.startsWith('burst_w') || (g.spNode && g.querySelector('rect'))) {
					if (!g.textContent.startsWith('burst_w')) continue;
					const r = g.querySelector('rect').getBoundingClientRect();
					return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
				}
			return null;
		});
		if (box) {
			await page.mouse.click(box.x, box.y);
			const z = await page.evaluate(() => spheat.api.state());
			check('a click on burst_work zooms to it', z.zoomed > 0 && z.zoomTotal === bw[1], JSON.stringify(z));
			const wide = await page.evaluate(() => {
				for (const g of document.getElementById('flame').children)
					if (g.textContent.startsWith('burst_w')) return +g.querySelector('rect').getAttribute('width');
				return 0;
			});
			check('the zoomed frame is full width', wide > 1000, `width ${wide}`);
			await page.keyboard.press('Escape');
			check('Esc resets the zoom', (await page.evaluate(() => spheat.api.state())).zoomed === 0);
		} else notok('burst_work has a label to click');
		await page.evaluate(() => spheat.api.search('^burst_work$'));
		const m = await page.evaluate(() => spheat.api.state().matched);
		const share = (100 * bw[1] / want).toFixed(2) + '%';
		check(`search ^burst_work$: Matched ${share}`, m === 'Matched: ' + share, m);
		const magenta = await page.evaluate(() => document.querySelectorAll('#flame rect[fill="rgb(230,0,230)"]').length);
		check('search highlights the matching frames', magenta >= 1);
		await page.keyboard.press('Escape');
		// a range of one cell, selected through the API, and a reversed one
		await page.evaluate(([x, y]) => spheat.api.select(y, x), [a, b]);
		check('a range given end first is the same range', (await page.evaluate(() => spheat.api.state().total)) === want);
		if (png) {
			await page.evaluate(() => spheat.api.search('^burst_work$'));
			const h = await page.evaluate(() => spheat.api.state().height);
			await page.setViewportSize({ width: 1200, height: Math.ceil(h) });
			await page.screenshot({ path: png });
		}
	}
	check('no script errors', errors.length === 0, errors.join('; '));
	await ctx.close();
	fs.rmSync(tmp, { recursive: true, force: true });
	process.exit(0);
})().catch((e) => { notok('browser run', String(e)); process.exit(0); });
