/* heatmap.js — the interactive part of psvg --heatmap (embedded at build
 * time; formats/heatmap.c writes the data it reads from `spheat`).
 *
 * The map's cells are drawn by psvg (a column per second, a row per
 * slice); this script selects a range of them (click a start cell, then an
 * end cell: every slice from the one to the other in time order) and draws
 * the flame graph of exactly those samples below the map.  In the graph:
 * click a frame to zoom (ancestors stay, dimmed), "Reset Zoom" or Esc
 * resets, Ctrl-F or "Search" highlights names matching a regular
 * expression and shows their share (each sample counted once).  Names reach
 * the document only through textContent.
 *
 * D.mode "hosts" (psvg --heatmap=hosts): a row per host, a column per time
 * bucket, cells holding weights of D.unit; a selection is the rectangle of
 * hosts and buckets between the two cells clicked.
 */
(function () {
	"use strict";
	var D = window.spheat;
	var hosts = D.mode === "hosts";
	var NS = "http://www.w3.org/2000/svg";
	var svg = document.documentElement;
	function $(id) { return document.getElementById(id); }

	/* ---- the data ---- */
	var n = D.nodes.length / 2 + 1, i, j;
	var parent = new Int32Array(n), name = new Int32Array(n), depth = new Int32Array(n);
	for (i = 1; i < n; i++) {
		parent[i] = D.nodes[2 * (i - 1)];
		name[i] = D.nodes[2 * (i - 1) + 1];
		depth[i] = depth[parent[i]] + 1; /* parents come before children */
	}
	var kids = [];
	for (i = 0; i < n; i++) kids.push([]);
	for (i = 1; i < n; i++) kids[parent[i]].push(i);
	function byName(a, b) {
		var x = D.names[name[a]], y = D.names[name[b]];
		return x < y ? -1 : x > y ? 1 : a - b;
	}
	for (i = 0; i < n; i++) kids[i].sort(byName);
	/* per cell: [node, samples, node, samples, ...] */
	var ncells = D.cols * D.rows, cellData = new Array(ncells), cellCount = new Float64Array(ncells);
	for (i = 0; i < D.cells.length;) {
		var c = D.cells[i], k = D.cells[i + 1];
		cellData[c] = D.cells.slice(i + 2, i + 2 + 2 * k);
		for (j = 0; j < k; j++) cellCount[c] += D.cells[i + 3 + 2 * j];
		i += 2 + 2 * k;
	}
	D.cells = null;
	/* hosts --function: the weight of the stacks holding D.fn, per cell */
	var cellFn = new Float64Array(ncells);
	if (hosts && D.fn !== null) {
		var hasF = new Uint8Array(n);
		for (i = 1; i < n; i++) hasF[i] = hasF[parent[i]] || D.names[name[i]] === D.fn ? 1 : 0;
		for (c = 0; c < ncells; c++) if (cellData[c])
			for (j = 0; j < cellData[c].length; j += 2) if (hasF[cellData[c][j]]) cellFn[c] += cellData[c][j + 1];
	}

	/* ---- state ---- */
	var rects = $("cells").getElementsByTagName("rect");
	var start = -1, end = -1, tot = new Float64Array(n), zoomed = 0, term = null, drawn = 0, maxd = 0;
	var flame = $("flame"), details = $("details"), matched = $("matched"), unzoom = $("unzoom");
	var flameTop = D.top + D.rows * D.ch + 34, baseH = +svg.getAttribute("height");

	function two(v) { return (v < 10 ? "0" : "") + v; }
	function bucketName(col) {
		var t = D.t0 + col * D.bucket;
		if (!D.wall) return "+" + (t - D.t0) + " s";
		var d = new Date(t * 1000);
		return two(d.getUTCHours()) + ":" + two(d.getUTCMinutes()) + (d.getUTCSeconds() ? ":" + two(d.getUTCSeconds()) : "");
	}
	function cellName(c) {
		var col = Math.floor(c / D.rows), row = c % D.rows;
		if (hosts) return D.rowNames[row] + " " + bucketName(col) + (D.wall ? " UTC" : "");
		return col + " s + " + Math.round(row * 1000 / D.rows) + " ms";
	}
	function rangeName(a, b) {
		if (!hosts) return cellName(a) + " .. " + cellName(b);
		var r0 = a % D.rows, r1 = b % D.rows, c0 = Math.floor(a / D.rows), c1 = Math.floor(b / D.rows);
		return (r0 === r1 ? D.rowNames[r0] : D.rowNames[r0] + " .. " + D.rowNames[r1] + " (" + (r1 - r0 + 1) + " hosts)") +
			", " + bucketName(c0) + " .. " + bucketName(c1 + 1) + (D.wall ? " UTC" : "");
	}
	/* a value in the map's unit, as psvg and preport write it */
	function commas(v) {
		var s = Math.abs(v) === Math.floor(Math.abs(v)) ? String(Math.abs(v)) : Math.abs(v).toFixed(2), k = s.indexOf(".");
		if (k < 0) k = s.length;
		var out = s.slice(k);
		for (var q = k; q > 0; q -= 3) out = s.slice(Math.max(0, q - 3), q) + (out && out[0] !== "." ? "," : "") + out;
		return (v < 0 ? "-" : "") + out;
	}
	function samples(v) {
		if (!hosts) return v + (v === 1 ? " sample" : " samples");
		if (D.unit === "ns") return Math.abs(v) >= 1e9 ? (v / 1e9).toFixed(2) + " s" : (v / 1e6).toFixed(2) + " ms";
		return commas(v) + (D.unit ? " " + D.unit : "");
	}
	function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(2) + "%" : "-"; }

	/* ---- the selection ---- */
	/* hosts: the rectangle between cells start and end (start: its top
	 * left, end: its bottom right); else every cell from start to end */
	function inRange(c) {
		if (!hosts) return c >= start && c <= end;
		var r = c % D.rows, col = Math.floor(c / D.rows);
		return r >= start % D.rows && r <= end % D.rows && col >= Math.floor(start / D.rows) && col <= Math.floor(end / D.rows);
	}
	function mark() {
		for (var c = 0; c < rects.length; c++) {
			var on = start >= 0 && (end < 0 ? c === start : inRange(c));
			if (on) rects[c].classList.add("sel"); else rects[c].classList.remove("sel");
		}
	}
	function select(a, b) {
		if (hosts) {
			var ra = a % D.rows, rb = b % D.rows, ca = Math.floor(a / D.rows), cb = Math.floor(b / D.rows);
			start = Math.min(ca, cb) * D.rows + Math.min(ra, rb);
			end = Math.max(ca, cb) * D.rows + Math.max(ra, rb);
		} else {
			start = Math.min(a, b);
			end = Math.max(a, b);
		}
		mark();
		var self = new Float64Array(n), c, m;
		for (c = start; c <= end; c++) {
			if (!inRange(c)) continue;
			var d = cellData[c];
			if (!d) continue;
			for (m = 0; m < d.length; m += 2) self[d[m]] += d[m + 1];
		}
		tot = self;
		for (i = n - 1; i > 0; i--) tot[parent[i]] += tot[i];
		zoomed = 0;
		draw();
	}

	/* ---- the flame graph ---- */
	function colour(i) {
		var s = D.names[name[i]], h = 0, h2 = 0;
		for (var q = 0; q < s.length; q++) { h = (h * 31 + s.charCodeAt(q)) >>> 0; h2 = (h2 * 17 + s.charCodeAt(q)) >>> 0; }
		var v1 = (h % 1000) / 1000, v2 = (h2 % 1000) / 1000;
		return "rgb(" + (205 + Math.round(50 * v2)) + "," + Math.round(230 * v1) + "," + Math.round(55 * v2) + ")";
	}
	function isMatch(i) { return term && i > 0 && term.test(D.names[name[i]]); }
	function frameY(d) { return flameTop + (maxd - d) * D.fh; }
	function box(i, x0, w, dim) {
		var g = document.createElementNS(NS, "g"), r = document.createElementNS(NS, "rect");
		r.setAttribute("x", x0.toFixed(2));
		r.setAttribute("y", frameY(depth[i]));
		r.setAttribute("width", Math.max(w, 0.5).toFixed(2));
		r.setAttribute("height", D.fh - 1);
		r.setAttribute("fill", isMatch(i) ? "rgb(230,0,230)" : colour(i));
		if (dim) g.setAttribute("class", "dim");
		g.appendChild(r);
		var label = i ? D.names[name[i]] : "all";
		var fit = Math.floor((w - 6) / 6.5);
		if (fit >= 3) {
			var t = document.createElementNS(NS, "text");
			t.setAttribute("x", (x0 + 3).toFixed(2));
			t.setAttribute("y", frameY(depth[i]) + D.fh - 5);
			t.textContent = label.length <= fit ? label : label.slice(0, fit - 2) + "..";
			g.appendChild(t);
		}
		g.spNode = i;
		flame.appendChild(g);
		drawn++;
	}
	function draw() {
		while (flame.firstChild) flame.removeChild(flame.firstChild);
		drawn = 0;
		if (start < 0 || end < 0) return;
		var W = D.W - 2 * D.pad, z = zoomed, sc = tot[z] > 0 ? W / tot[z] : 0, a;
		/* depth of the view: the zoomed subtree */
		maxd = depth[z];
		var stack = [z];
		while (stack.length) {
			a = stack.pop();
			if (depth[a] > maxd) maxd = depth[a];
			for (j = 0; j < kids[a].length; j++) if (tot[kids[a][j]] * sc >= 0.1) stack.push(kids[a][j]);
		}
		svg.setAttribute("height", Math.max(baseH, frameY(0) + D.fh + 2 * D.pad));
		/* ancestors of the zoomed frame, full width and dimmed */
		for (a = z; a > 0;) { a = parent[a]; box(a, D.pad, W, true); }
		(function walk(i, x0) {
			box(i, x0, tot[i] * sc, false);
			var x = x0, self = tot[i];
			for (var q = 0; q < kids[i].length; q++) self -= tot[kids[i][q]];
			x += self * sc; /* own samples at the left edge, as psvg */
			for (q = 0; q < kids[i].length; q++) {
				var ch = kids[i][q], w = tot[ch] * sc;
				if (w >= 0.1) walk(ch, x);
				x += w;
			}
		})(z, D.pad);
		unzoom.setAttribute("display", z ? "inline" : "none");
		details.textContent = "Range " + rangeName(start, end) + ": " + samples(tot[0]) +
			(z ? "; zoomed to " + D.names[name[z]] + " (" + samples(tot[z]) + ", " + pct(tot[z], tot[0]) + ")" : "");
		showMatched();
	}
	/* samples under a matching frame, each counted once */
	function matchedShare() {
		var sum = 0, stack = [zoomed];
		while (stack.length) {
			var a = stack.pop();
			if (isMatch(a)) { sum += tot[a]; continue; }
			for (var q = 0; q < kids[a].length; q++) if (tot[kids[a][q]] > 0) stack.push(kids[a][q]);
		}
		return sum;
	}
	function showMatched() {
		matched.textContent = term && start >= 0 && end >= 0 ? "Matched: " + pct(matchedShare(), tot[zoomed]) : " ";
	}
	function search(t) {
		if (!t) { term = null; draw(); return; }
		try { term = new RegExp(t); } catch (e) { term = null; matched.textContent = "bad regular expression"; return; }
		draw();
	}
	function reset() { zoomed = 0; term = null; draw(); }

	/* ---- events ---- */
	for (i = 0; i < rects.length; i++) rects[i].spCell = i;
	function cellOf(t) { return t && t.spCell !== undefined ? t.spCell : -1; }
	$("cells").addEventListener("click", function (e) {
		var c = cellOf(e.target);
		if (c < 0) return;
		if (start < 0 || end >= 0) {
			start = c;
			end = -1;
			mark();
			details.textContent = "Start " + cellName(c) + ": click an end cell";
		} else {
			select(start, c);
		}
	});
	$("cells").addEventListener("mousemove", function (e) {
		var c = cellOf(e.target);
		if (c >= 0) details.textContent = cellName(c) + ": " + samples(cellCount[c]) +
			(hosts && D.fn !== null ? ", " + pct(cellFn[c], cellCount[c]) + " in " + D.fn : "");
	});
	flame.addEventListener("click", function (e) {
		var g = e.target.parentNode;
		if (g && g.spNode !== undefined) { zoomed = g.spNode; draw(); }
	});
	flame.addEventListener("mousemove", function (e) {
		var g = e.target.parentNode;
		if (g && g.spNode !== undefined) {
			var i = g.spNode;
			details.textContent = (i ? D.names[name[i]] : "all") + " (" + samples(tot[i]) + ", " + pct(tot[i], tot[0]) + ")";
		}
	});
	unzoom.addEventListener("click", function () { zoomed = 0; draw(); });
	$("search").addEventListener("click", function () { search(window.prompt("Search (regular expression)", term ? term.source : "")); });
	window.addEventListener("keydown", function (e) {
		if ((e.ctrlKey || e.metaKey) && e.keyCode === 70) {
			e.preventDefault();
			search(window.prompt("Search (regular expression)", term ? term.source : ""));
		} else if (e.keyCode === 27) {
			reset();
		}
	});

	/* For scripts around the document (tests, embedding pages). */
	D.api = {
		select: select, search: search, reset: reset,
		zoom: function (nm) {
			for (var q = 1; q < n; q++) if (D.names[name[q]] === nm && tot[q] > 0) { zoomed = q; draw(); return q; }
			return -1;
		},
		count: function (c) { return cellCount[c]; },
		share: function (c) { return cellFn[c]; },
		cellName: cellName,
		state: function () {
			return { start: start, end: end, total: tot[0], zoomed: zoomed, zoomTotal: tot[zoomed], drawn: drawn,
				matched: matched.textContent, height: +svg.getAttribute("height"), cols: D.cols, rows: D.rows,
				mode: D.mode || "seconds", details: details.textContent };
		},
		/* the selection as folded text: "a;b;c weight" per stack with own
		 * weight, root ("all") left out, in no particular order */
		folded: function () {
			var out = [], own = new Float64Array(n), q;
			for (q = 1; q < n; q++) own[q] = tot[q];
			for (q = 1; q < n; q++) if (parent[q]) own[parent[q]] -= tot[q];
			for (q = 1; q < n; q++) if (own[q] > 0) {
				var path = [];
				for (var a = q; a > 0; a = parent[a]) path.push(D.names[name[a]]);
				out.push(path.reverse().join(";") + " " + own[q]);
			}
			return out;
		},
		/* frames drawn: [name, samples] */
		frames: function () {
			var out = [];
			for (var g = flame.firstChild; g; g = g.nextSibling) if (g.spNode !== undefined)
				out.push([g.spNode ? D.names[name[g.spNode]] : "all", tot[g.spNode]]);
			return out;
		}
	};
})();
