/* flame.js — the interactive part of psvg's SVG flame graphs (embedded at
 * build time; see formats/svg.c for the data it reads from `spflame`).
 *
 * Every frame of the profile is in the data, narrow ones too; only those at
 * least `minpx` wide in the current view are drawn, so a zoom redraws the
 * zoomed frame's subtree (walking it in preorder and skipping whole
 * subtrees that are too narrow) and never touches the rest.  Names reach the
 * document only through textContent, never as markup.
 *
 * Click: zoom (ancestors stay, dimmed; click one to zoom out to it).
 * Esc: reset zoom and search.  Ctrl-F / F3 / "Search": regular expression
 * over frame names.  Ctrl-I / "ic": toggle case.  The view is kept in the
 * URL fragment (#z=FRAME&s=REGEX&i=1), so a link shows the same view, and
 * the browser's Back undoes a zoom.
 */
(function () {
	"use strict";
	var D = window.spflame;
	var NS = "http://www.w3.org/2000/svg";
	var me = document.currentScript;
	var svg = (me && me.ownerSVGElement) || document.documentElement;
	function $(id) { return svg.querySelector("#" + id); }

	/* ---- decoding ---- */
	var T = "0123456789abcdefghijklmnopqrstuv", C = "wxyzABCDEFGHIJKLMNOPQRSTUVWXYZ$%";
	var LUT = new Int8Array(128), k;
	for (k = 0; k < 32; k++) { LUT[T.charCodeAt(k)] = k; LUT[C.charCodeAt(k)] = 32 + k; }
	var s = D.frames, p = 0;
	function num() {
		var v = 0, c;
		for (;;) {
			c = LUT[s.charCodeAt(p++)];
			if (c < 32) return v * 32 + c;
			v = v * 32 + (c - 32);
		}
	}
	var n = D.n;
	var depth = new Int32Array(n), name = new Int32Array(n), parent = new Int32Array(n), end = new Int32Array(n);
	var x = new Float64Array(n), w = new Float64Array(n);
	var other = D.diff ? new Float64Array(n) : null, sd = D.diff ? new Float64Array(n) : null;
	(function () {
		var cur = [0, 0], anc = [0], prev = 0, i, d, z;
		w[0] = D.total;
		if (other) other[0] = D.total2;
		for (i = 1; i < n; i++) {
			d = prev + 1 - num();
			name[i] = num();
			x[i] = cur[d] + num();
			w[i] = num();
			cur[d] = x[i] + w[i];
			cur[d + 1] = x[i];
			depth[i] = d;
			parent[i] = anc[d - 1];
			anc[d] = i;
			prev = d;
			if (other) {
				other[i] = num();
				z = num();
				sd[i] = z % 2 ? -(z + 1) / 2 : z / 2;
			}
		}
		/* end: one past a frame's subtree in preorder */
		var st = [], sp = 0;
		for (i = 0; i < n; i++) {
			while (sp && depth[st[sp - 1]] >= depth[i]) end[st[--sp]] = i;
			st[sp++] = i;
		}
		while (sp) end[st[--sp]] = n;
	})();
	s = null;

	/* ---- state ---- */
	var zoomed = 0, term = null, ignorecase = false, match = null, drawn = [];
	var H = +svg.getAttribute("height");
	var frames = $("frames"), details = $("details"), matched = $("matched");
	var unzoombtn = $("unzoom"), searchbtn = $("search"), icbtn = $("ignorecase");

	/* ---- text ---- */
	function fmt(v) {
		v = v / D.scale * D.factor;
		var r = Math.round(v);
		var t = Math.abs(v - r) < 1e-9 * Math.max(1, Math.abs(v)) ? String(Math.abs(r)) :
			Math.abs(v).toFixed(2);
		var dot = t.indexOf("."), ip = dot < 0 ? t : t.slice(0, dot), fp = dot < 0 ? "" : t.slice(dot);
		ip = ip.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
		return (v < 0 ? "-" : "") + ip + fp;
	}
	/* A value with its unit: time ("ns" in the data) as ms or s, counts
	 * as "14 samples", the same words as preport and pdiff --report; a
	 * value of unknown unit (folded text) as a bare number. */
	function val(v) {
		if (D.unit !== "ns") return D.unit ? fmt(v) + " " + D.unit : fmt(v);
		var x = v / D.scale * D.factor, a = Math.abs(x);
		return a >= 1e9 ? (x / 1e9).toFixed(2) + " s" : (x / 1e6).toFixed(2) + " ms";
	}
	function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(2) + "%" : "-"; }
	function fit(i, px) {
		var c = Math.floor(px / (D.fs * D.fw)), t = D.names[name[i]];
		if (c < 3) return "";
		return t.length <= c ? t : t.slice(0, c - 2) + "..";
	}
	/* "N unit, P%; ..." for the details line and the tooltip. */
	function detail(i) {
		var t;
		if (!D.diff) {
			t = val(w[i]) + ", " + pct(w[i], w[0]);
		} else {
			var after = D.removed ? other[i] : w[i], before = D.removed ? w[i] : other[i];
			var tot = D.removed ? other[0] : w[0], ch = after - before;
			t = val(after) + ", " + pct(after, tot) + "; before " + val(before) +
				", change " + (ch > 0 ? "+" : "") + val(ch) +
				(before > 0 ? " (" + (ch > 0 ? "+" : "") + pct(ch, before) + ")" : after > 0 ? " (new)" : "");
		}
		if (zoomed && i) t += "; " + pct(w[i], w[zoomed]) + " of zoomed";
		return t;
	}
	/* " at file.c:12" when the input has source lines */
	function src(i) { var s = i && D.srcs ? D.srcs[name[i]] : ""; return s ? " at " + s : ""; }
	function info(i) { return (i ? D.names[name[i]] : "all") + src(i) + " (" + detail(i) + ")"; }
	function colour(i) {
		if (match && i && match[name[i]]) return D.sc;
		if (!D.diff) return "#" + D.colours.substr(6 * name[i], 6);
		var v = D.neg ? -sd[i] : sd[i], m = D.maxdelta > 0 ? D.maxdelta : 1, r = 255, g = 255, b = 255;
		if (v > 0) g = b = Math.floor(210 * (m - v) / m);
		else if (v < 0) r = g = Math.floor(210 * (m + v) / m);
		return "rgb(" + r + "," + g + "," + b + ")";
	}

	/* ---- drawing ---- */
	/* Frames at least minpx wide in the view of frame z, in preorder,
	 * skipping whole subtrees that are too narrow: fn(i, px) for each. */
	function walk(z, fn) {
		var sc = (D.W - 2 * D.xpad) / w[z], i = z, e = end[z], min = D.minpx;
		while (i < e) {
			var px = w[i] * sc;
			if (!(px >= min) || !(w[i] > 0)) { i = end[i]; continue; }
			fn(i, px);
			i++;
		}
		return sc;
	}
	function frameY(d) {
		return D.inv ? D.ypad1 + D.ypad3 + d * D.fh : H - D.ypad2 - (d + 1) * D.fh + 1;
	}
	function resize(maxdepth) {
		var h = (maxdepth + 1) * D.fh + D.ypad1 + D.ypad2 + D.ypad3;
		if (h === H) return;
		H = h;
		svg.setAttribute("height", h);
		svg.setAttribute("viewBox", "0 0 " + D.W + " " + h);
		details.setAttribute("y", h - D.ypad2 / 2);
		matched.setAttribute("y", h - D.ypad2 / 2);
	}
	function r1(v) { return Math.round(v * 10) / 10; }
	function r2(v) { return Math.round(v * 100) / 100; }
	/* Frames narrower than NARROW pixels are slivers.  Each row keeps, per
	 * pixel column, the colour group of the first sliver there; runs of
	 * columns of one group become one rectangle of a <path> per group: a
	 * handful of elements whatever the number of frames.  The frame under
	 * the pointer is found by position (see frameAt). */
	var NARROW = 3, drawList = null;
	function bucket(c) {
		if (c.charAt(0) === "#") return c.substr(1, 1) + c.substr(3, 1) + c.substr(5, 1);
		var m = c.match(/\d+/g);
		return (m[0] >> 4).toString(16) + (m[1] >> 4).toString(16) + (m[2] >> 4).toString(16);
	}
	function draw() {
		var z = zoomed, g = document.createElementNS(NS, "g"), anc = [], a, k, i, e;
		for (a = z; a; a = parent[a]) anc.unshift(a);
		anc.unshift(0);
		anc.pop();
		/* the frames to draw, in preorder, and how deep they go */
		var sc = (D.W - 2 * D.xpad) / w[z], min = D.minpx, nl = 0;
		if (!drawList) drawList = new Int32Array(n); /* one for every redraw: no 1 MB array per zoom to collect */
		var list = drawList;
		var md = anc.length ? depth[anc[anc.length - 1]] + 1 : 0;
		/* The view is as deep as its frames of a pixel or more: a rare
		 * deep stack of slivers does not make it tall (zoom shows it). */
		for (i = z, e = end[z]; i < e;) {
			if (!(w[i] * sc >= min) || !(w[i] > 0)) { i = end[i]; continue; }
			if (w[i] * sc >= 1 && depth[i] > md) md = depth[i];
			list[nl++] = i;
			i++;
		}
		for (k = 0, e = 0; k < nl; k++) if (depth[list[k]] <= md) list[e++] = list[k];
		nl = e;
		resize(md);
		g.setAttribute("id", "frames");
		drawn = [];
		var ox = x[z], fh = D.fh, full = D.W - 2 * D.xpad;
		function one(i, px0, px, cls) {
			var y = frameY(depth[i]), r = document.createElementNS(NS, "rect");
			r.setAttribute("x", r1(px0));
			r.setAttribute("y", r1(y));
			r.setAttribute("width", r1(px));
			r.setAttribute("height", fh - 1);
			r.setAttribute("fill", colour(i));
			if (cls) r.setAttribute("class", cls);
			r.__i = i;
			g.appendChild(r);
			drawn.push(r);
			var t = fit(i, px);
			if (t) {
				var e = document.createElementNS(NS, "text");
				e.setAttribute("x", r1(px0 + 3));
				e.setAttribute("y", r1(y + fh / 2 + 3.5));
				e.textContent = t;
				g.appendChild(e);
			}
		}
		for (k = 0; k < anc.length; k++) one(anc[k], D.xpad, full, "parent");
		var cols = Math.ceil(D.W), grid = null, groups = [], gid = {};
		/* a sliver's colour group, per name (a colour is a name's, but in
		 * a differential graph): no colour string per sliver */
		var byname = D.diff ? null : new Int32Array(D.names.length).fill(-1);
		for (k = 0; k < nl; k++) {
			i = list[k];
			var px = w[i] * sc, px0 = D.xpad + (x[i] - ox) * sc;
			if (px >= NARROW || i === z) {
				one(i, px0, px, D.diff && D.removed && i && other[i] === 0 ? "gone" : null);
				continue;
			}
			if (!grid) { grid = new Int16Array((md + 1) * cols); grid.fill(-1); }
			var c0 = Math.min(cols - 1, Math.max(0, Math.floor(px0))), c1 = Math.min(cols - 1, Math.max(c0, Math.ceil(px0 + px) - 1));
			var row0 = depth[i] * cols, id = -1;
			for (var cc = c0; cc <= c1; cc++) {
				if (grid[row0 + cc] >= 0) continue;
				if (id < 0 && byname) id = byname[name[i]];
				if (id < 0) {
					var c = colour(i), key = bucket(c);
					id = gid[key];
					if (id === undefined) { id = gid[key] = groups.length; groups.push({ fill: c, d: "" }); }
					if (byname) byname[name[i]] = id;
				}
				grid[row0 + cc] = id;
			}
		}
		if (grid) {
			var tail = "v" + (fh - 1) + "h-";
			for (var d = 0; d <= md; d++) {
				var y = r1(frameY(d)), row = d * cols;
				for (var col = 0; col < cols;) {
					var id2 = grid[row + col];
					if (id2 < 0) { col++; continue; }
					var from = col;
					while (col < cols && grid[row + col] === id2) col++;
					groups[id2].d += "M" + from + " " + y + "h" + (col - from) + tail + (col - from) + "z";
				}
			}
			for (k = 0; k < groups.length; k++) {
				var p = document.createElementNS(NS, "path");
				p.setAttribute("d", groups[k].d);
				p.setAttribute("fill", groups[k].fill);
				p.setAttribute("class", "narrow");
				g.appendChild(p);
			}
		}
		frames.parentNode.replaceChild(g, frames);
		frames = g;
		hideTip();
		unzoombtn.classList.toggle("hide", z === 0);
	}
	/* The overview is in the document already (drawn by psvg for viewers
	 * without scripts, by the same rules): adopt its rects instead of
	 * redrawing, when they are the ones this script would draw. */
	function adopt() {
		var rects = frames.getElementsByTagName("rect"), j = 0, okay = true;
		drawn = [];
		walk(0, function (i, px) {
			if (px < NARROW && i) return;
			if (j >= rects.length) { okay = false; return; }
			rects[j].__i = i;
			drawn.push(rects[j++]);
		});
		return okay && j === rects.length;
	}
	/* The frame under a sliver: the row from y, then down the tree from the
	 * zoomed frame to the frame of that row nearest to x. */
	function frameAt(evt) {
		var pt = svgPoint(evt), d = D.inv ? Math.floor((pt.y - D.ypad1 - D.ypad3) / D.fh) :
			Math.floor((H - D.ypad2 - pt.y) / D.fh);
		var sc = (D.W - 2 * D.xpad) / w[zoomed], ux = (pt.x - D.xpad) / sc + x[zoomed], i = zoomed;
		if (d < depth[i]) return -1;
		while (depth[i] < d) {
			var best = -1, bd = Infinity, c;
			for (c = i + 1; c < end[i]; c = end[c]) {
				if (!(w[c] > 0)) continue;
				var dist = ux < x[c] ? x[c] - ux : ux > x[c] + w[c] ? ux - x[c] - w[c] : 0;
				if (dist < bd) { bd = dist; best = c; }
				if (x[c] > ux) break;
			}
			if (best < 0 || bd * sc > 2) return -1;
			i = best;
		}
		return i;
	}
	function svgPoint(evt) {
		var pt = svg.createSVGPoint(), m = svg.getScreenCTM();
		pt.x = evt.clientX;
		pt.y = evt.clientY;
		return m ? pt.matrixTransform(m.inverse()) : pt;
	}
	function recolour() { draw(); }

	/* ---- search ---- */
	function matchedShare(from, to) {
		var sum = 0, i = from;
		while (i < to) {
			if (i && w[i] > 0 && match[name[i]]) { sum += w[i]; i = end[i]; } else i++;
		}
		return sum;
	}
	function showMatched() {
		if (!match) {
			matched.textContent = " ";
			return;
		}
		var all = matchedShare(0, n), t = "Matched: " + pct(all, w[0]);
		if (zoomed) {
			var inside = 0, a;
			for (a = zoomed; a; a = parent[a]) if (match[name[a]]) inside = w[zoomed];
			if (!inside) inside = matchedShare(zoomed, end[zoomed]);
			t += " (" + pct(inside, w[zoomed]) + " of zoomed)";
		}
		matched.textContent = t;
	}
	function compile(t) {
		try {
			return new RegExp(t, ignorecase ? "i" : "");
		} catch (e) {
			return null;
		}
	}
	function search(t, quiet) {
		term = t;
		var re = t === null || t === "" ? null : compile(t);
		if (t && !re) {
			match = null;
			term = null;
			recolour();
			matched.textContent = "Invalid regular expression";
			return;
		}
		if (!re) {
			term = null;
			match = null;
		} else {
			match = new Uint8Array(D.names.length);
			for (var k = 0; k < D.names.length; k++) match[k] = re.test(D.names[k]) ? 1 : 0;
		}
		searchbtn.classList.toggle("show", !!match);
		searchbtn.textContent = match ? "Reset Search" : "Search";
		recolour();
		showMatched();
		if (!quiet) saveState(false);
	}
	function searchPrompt() {
		if (match) { search(null); return; }
		var t = window.prompt("Search frame names (regular expression, e.g. ^ext4_)" +
			(ignorecase ? ", ignoring case" : "") + "\nCtrl-I toggles case", term || "");
		if (t !== null) search(t);
	}
	function toggleCase() {
		ignorecase = !ignorecase;
		icbtn.classList.toggle("show", ignorecase);
		if (term !== null) search(term);
		else saveState(false);
	}

	/* ---- zoom and the URL ---- */
	function zoom(i, quiet) {
		if (!(i >= 0 && i < n)) i = 0;
		zoomed = i;
		draw();
		showMatched();
		if (!quiet) saveState(true);
	}
	/* The widest frame whose name is marked (the shallowest of equals):
	 * where --root and the Python button start the view (the script's
	 * <module>, not a stray one atop a stack that did not unwind); 0 if
	 * none. */
	function firstOf(marked) {
		var best = 0;
		for (var i = 1; i < n; i++)
			if (marked[name[i]] && w[i] > 0 && (!best || w[i] > w[best] ||
			    (w[i] === w[best] && depth[i] < depth[best]))) best = i;
		return best;
	}
	function pyRoot() {
		var m = new Uint8Array(D.names.length);
		(D.py || []).forEach(function (k) { m[k] = 1; });
		return firstOf(m);
	}
	function rootOf(re) {
		var m = new Uint8Array(D.names.length), r;
		try { r = new RegExp(re); } catch (e) { return 0; }
		for (var k = 0; k < D.names.length; k++) m[k] = r.test(D.names[k]) ? 1 : 0;
		return firstOf(m);
	}
	function reset() {
		if (zoomed) zoom(0);
		if (match || term !== null) search(null);
	}
	function stateHash() {
		var parts = [];
		if (zoomed) parts.push("z=" + zoomed);
		if (term !== null) parts.push("s=" + encodeURIComponent(term));
		if (ignorecase) parts.push("i=1");
		return parts.length ? "#" + parts.join("&") : "";
	}
	function saveState(push) {
		var h = stateHash();
		if (h === location.hash || (h === "" && location.hash === "")) return;
		try {
			var url = location.href.split("#")[0] + (h || "#");
			if (push) history.pushState(null, "", url); else history.replaceState(null, "", url);
		} catch (e) { /* a sandboxed viewer without history: keep going */ }
	}
	function loadState() {
		var h = location.hash.replace(/^#/, ""), st = {};
		h.split("&").forEach(function (kv) {
			var e = kv.indexOf("=");
			if (e > 0) {
				try { st[kv.slice(0, e)] = decodeURIComponent(kv.slice(e + 1)); } catch (err) { /* ignore */ }
			}
		});
		ignorecase = st.i === "1";
		icbtn.classList.toggle("show", ignorecase);
		var z = st.z ? parseInt(st.z, 10) : 0;
		if (z !== zoomed) zoom(z, true);
		var t = st.s === undefined ? null : st.s;
		if (t !== term || match) search(t, true);
	}

	/* ---- the tooltip ---- */
	var tip = document.createElementNS(NS, "g"), tipRect = document.createElementNS(NS, "rect");
	tip.setAttribute("id", "tip");
	tip.setAttribute("class", "hide");
	tip.appendChild(tipRect);
	svg.appendChild(tip);
	function showTip(i, evt) {
		var lines = [], nm = i ? D.names[name[i]] : "all", per = Math.max(20, Math.floor(D.W * 0.6 / 6.5)), k;
		for (k = 0; k < nm.length && lines.length < 8; k += per) lines.push(nm.slice(k, k + per));
		if (k < nm.length) lines[lines.length - 1] += "\u2026";
		if (src(i)) lines.push(src(i).slice(1).slice(0, per * 2));
		lines.push(detail(i));
		while (tip.childNodes.length > 1) tip.removeChild(tip.lastChild);
		var lh = 13, wmax = 0;
		for (k = 0; k < lines.length; k++) {
			var e = document.createElementNS(NS, "text");
			e.setAttribute("x", 6);
			e.setAttribute("y", 14 + k * lh);
			e.textContent = lines[k];
			tip.appendChild(e);
			wmax = Math.max(wmax, lines[k].length * 6.2);
		}
		var tw = wmax + 12, th = lines.length * lh + 8;
		tipRect.setAttribute("width", tw);
		tipRect.setAttribute("height", th);
		var pt = svgPoint(evt);
		var tx = pt.x + 12, ty = pt.y + 16;
		if (tx + tw > D.W) tx = Math.max(0, pt.x - tw - 6);
		if (ty + th > H) ty = Math.max(0, pt.y - th - 6);
		tip.setAttribute("transform", "translate(" + r1(tx) + "," + r1(ty) + ")");
		tip.classList.remove("hide");
	}
	function hideTip() { tip.classList.add("hide"); }

	/* ---- events ---- */
	function frameOf(evt) {
		var e = evt.target;
		if (e && e.__i !== undefined) return e.__i;
		if (e && e.getAttribute && e.getAttribute("class") === "narrow") return frameAt(evt);
		return -1;
	}
	svg.addEventListener("click", function (e) {
		var i = frameOf(e);
		if (i >= 0) {
			zoom(i === zoomed ? zoomed : i);
			hideTip();
			return;
		}
		var id = e.target.id;
		if (id === "unzoom") zoom(0);
		else if (id === "search") searchPrompt();
		else if (id === "ignorecase") toggleCase();
		else if (id === "pyroot") zoom(pyRoot());
	});
	svg.addEventListener("mousemove", function (e) {
		var i = frameOf(e);
		if (i < 0) {
			hideTip();
			return;
		}
		details.textContent = D.nametype + " " + info(i);
		showTip(i, e);
	});
	svg.addEventListener("mouseout", function (e) {
		if (frameOf(e) >= 0) {
			details.textContent = " ";
			hideTip();
		}
	});
	window.addEventListener("keydown", function (e) {
		if (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70)) {
			e.preventDefault();
			searchPrompt();
		} else if (e.ctrlKey && e.keyCode === 73) {
			e.preventDefault();
			toggleCase();
		} else if (e.keyCode === 27) {
			reset();
		}
	});
	window.addEventListener("popstate", loadState);
	window.addEventListener("hashchange", loadState);

	if (!adopt()) draw();
	loadState();
	/* --root: open at that frame, unless the URL says where */
	if (D.root && !/(^#|&)z=/.test(location.hash)) zoom(rootOf(D.root), true);
	/* For scripts around the document (tests, benchmarks, embedding pages). */
	D.api = {
		zoom: function (i) { zoom(i); }, search: function (t) { search(t); }, reset: reset,
		pyroot: pyRoot,
		state: function () {
			return { zoomed: zoomed, term: term, ignorecase: ignorecase, drawn: drawn.length,
				matched: matched.textContent, height: H, frames: n };
		},
		/* Where frame i is on the screen in the current view (client px). */
		box: function (i) {
			var sc = (D.W - 2 * D.xpad) / w[zoomed], m = svg.getScreenCTM(), p0 = svg.createSVGPoint(), p1;
			p0.x = D.xpad + (x[i] - x[zoomed]) * sc;
			p0.y = frameY(depth[i]);
			p1 = svg.createSVGPoint();
			p1.x = p0.x + w[i] * sc;
			p1.y = p0.y + D.fh - 1;
			p0 = p0.matrixTransform(m);
			p1 = p1.matrixTransform(m);
			return { x: p0.x, y: p0.y, w: p1.x - p0.x, h: p1.y - p0.y };
		},
		name: function (i) { return i > 0 && i < n ? D.names[name[i]] : "all"; },
		/* Frame i in the data's own units: its name, depth, start and width. */
		frame: function (i) {
			return { name: i > 0 && i < n ? D.names[name[i]] : "all", depth: depth[i], x: x[i], w: w[i] };
		},
		/* The widest frame below the root and the deepest frame (benchmarks). */
		extremes: function () {
			var wide = n > 1 ? 1 : 0, deep = 0, i;
			for (i = 1; i < n; i++) {
				if (depth[i] === 1 && w[i] > w[wide]) wide = i;
				if (depth[i] > depth[deep] && w[i] > 0) deep = i;
			}
			return { widest: wide, deepest: deep };
		},
		find: function (t) {
			for (var i = 1; i < n; i++) if (D.names[name[i]] === t) return i;
			return -1;
		}
	};
})();
