#!/usr/bin/env node
// psvg on a Python profile in headless Chromium: --root opens at the first
// (widest) <module> frame with the native base still in the data, Reset Zoom goes
// back to it, the "Python" button zooms to the first Python frame.
//
//   node tests/browser/pyroot.test.js ROOTED.svg PLAIN.svg
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const { launch, needPlaywright, tap } = require('./chromium');
needPlaywright('psvg Python browser tests');
const t = tap('browser');
const { ok, notok, check } = t;

(async () => {
	const [rooted, plain] = process.argv.slice(2);
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'psvg-py-'));
	const ctx = await launch(tmp, { width: 1280, height: 1000 });
	const page = await ctx.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(e.message));
	const open = async (f) => {
		await page.goto('file://' + f);
		await page.waitForFunction(() => window.spflame && window.spflame.api);
	};
	// the zoomed frame, its depth, and the names of its ancestors
	const view = () => page.evaluate(() => {
		const a = spflame.api, z = a.state().zoomed, f = a.frame(z), anc = [];
		for (let i = z - 1, d = f.depth - 1; i >= 0 && d >= 0; i--) {
			const g = a.frame(i);
			if (g.depth === d && g.x <= f.x && g.x + g.w >= f.x + f.w) { anc.unshift(g.name); d--; }
		}
		return { z, name: f.name, depth: f.depth, w: f.w, total: a.frame(0).w, anc, drawn: a.state().drawn };
	});
	try {
		await open(rooted);
		let v = await view();
		check('--root=<module>: the SVG opens zoomed to <module>', v.z > 0 && /^<module>/.test(v.name), JSON.stringify(v));
		check(`--root: the native base is in the data (${v.depth} frames below <module>: ${v.anc.slice(1, 4).join(', ')}...)`,
			v.depth >= 5 && v.anc.includes('_start') && v.total >= v.w, JSON.stringify(v.anc));
		check('--root: the URL is left alone', !page.url().includes('#'), page.url());
		await page.click('#unzoom');
		v = await view();
		check('Reset Zoom: back to the whole profile', v.z === 0, JSON.stringify(v));
		await page.click('#pyroot');
		v = await view();
		check('the Python button zooms to the first Python frame (<module>)', v.z > 0 && /^<module>/.test(v.name) &&
			v.depth >= 5, JSON.stringify(v));
		await open(plain);
		v = await view();
		check('without --root: the SVG opens on the whole profile', v.z === 0, JSON.stringify(v));
		await page.click('#pyroot');
		v = await view();
		check('without --root, the Python button: <module>', v.z > 0 && /^<module>/.test(v.name), JSON.stringify(v));
		check('no script errors', errors.length === 0, errors.join('; '));
	} finally {
		await ctx.close();
		fs.rmSync(tmp, { recursive: true, force: true });
	}
})().catch((e) => {
	notok('psvg Python browser run', e.message);
	process.exit(0);
});
