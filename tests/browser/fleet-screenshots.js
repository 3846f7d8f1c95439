#!/usr/bin/env node
// The fleet screenshots of the README (run by fleet-screenshots.sh, which
// makes the SVGs from a real store):
//   node fleet-screenshots.js HEATMAP.svg DIFF.svg OUT_DIR
// fleet-heatmap.png: the hosts heat map, web-4 .. web-6 from 10:04 on
// selected (two clicks), the flame graph of that slice below, "validate"
// searched; fleet-diff.png: the differential graph, pointing at validate.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { launch } = require('./chromium');

const [heat, diff, out] = process.argv.slice(2).map((p) => path.resolve(p));
(async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-shots-'));
	const ctx = await launch(dir, { width: 1200, height: 800 });
	const page = await ctx.newPage();
	await page.goto('file://' + heat);
	await page.waitForFunction(() => window.spheat && window.spheat.api, null, { timeout: 60000 });
	const st = await page.evaluate(() => spheat.api.state());
	const names = await page.evaluate(() => spheat.rowNames);
	const col = await page.evaluate(() => {
		for (let c = 0; c < spheat.cols; c++) if (spheat.api.cellName(c * spheat.rows).indexOf('10:04') >= 0) return c;
		return 0;
	});
	const cell = (r, c) => page.locator('#cells rect').nth(c * st.rows + r);
	await cell(names.indexOf('web-4'), col).click();
	await cell(names.indexOf('web-6'), st.cols - 1).click();
	await page.evaluate(() => spheat.api.search('^validate'));
	const h = await page.evaluate(() => spheat.api.state().height);
	await page.setViewportSize({ width: 1200, height: Math.ceil(h) });
	await page.screenshot({ path: path.join(out, 'fleet-heatmap.png') });

	await page.setViewportSize({ width: 1200, height: 800 });
	await page.goto('file://' + diff);
	await page.waitForFunction(() => window.spflame && window.spflame.api, null, { timeout: 60000 });
	const b = await page.evaluate(() => {
		const i = spflame.api.find('validate (fleet-work.py)');
		return i > 0 ? spflame.api.box(i) : null;
	});
	const dh = await page.evaluate(() => spflame.api.state().height);
	await page.setViewportSize({ width: 1200, height: Math.ceil(dh) });
	if (b) await page.mouse.move(b.x + Math.min(b.w / 2, 300), b.y + b.h / 2);
	await page.screenshot({ path: path.join(out, 'fleet-diff.png'), clip: { x: 0, y: 0, width: 1200, height: Math.ceil(dh) } });
	await ctx.close();
	fs.rmSync(dir, { recursive: true, force: true });
})().catch((e) => { console.error('fleet-screenshots: ' + e); process.exit(1); });
