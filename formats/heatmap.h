/* heatmap.h — psvg --heatmap: flamescope's sub-second heat map in one
 * standalone SVG.
 *
 * A column per second of stream time, a row per slice of that second
 * (rows = 50: 20 ms slices, the first at the top), each cell coloured by
 * its samples.  The file also holds, per cell, the samples of each stack
 * (a stack tree under the thread's name, as psvg draws it), so the script
 * (share/svg/heatmap.js) draws the flame graph of any range of cells the
 * user selects, below the map, with zoom and search.
 *
 * With hosts set (psvg --heatmap=hosts), the fleet's view instead: a row
 * per host (the stack's root frame when a tool made it: pfleet get --by
 * host, pmerge --tag; else the thread's name, else the root frame), a
 * column per time bucket (bucket seconds, 60), cells coloured by the
 * weight column (or by the share of the stacks holding the function fn);
 * a selection is a rectangle of hosts x buckets.
 *
 * The sink needs timestamps: the first sample without one stops the read
 * with an error.  Memory grows with distinct (cell, stack) pairs.  Weights
 * are sample counts (sub-second map) or the weight column's values (hosts).
 * The library never prints.
 */
#ifndef SP_HEATMAP_H
#define SP_HEATMAP_H

#include <stdio.h>

#include "profile.h"

struct sp_heatmap_opts {
	int rows;           /* slices per second (50) */
	double width;       /* image width, px (1200) */
	const char *title;  /* NULL = "Heat Map" */
	const char *js;     /* the embedded script (share/svg/heatmap.js) */
	size_t js_len;
	int hosts;          /* 1 hosts x buckets, 0 sub-second, -1: hosts when the
			       input says source=pfleet (pfleet get), else 0 */
	double bucket;      /* hosts: column width, seconds (60) */
	const char *fn;     /* hosts: colour by the share of stacks holding the frame
			       named fn (NULL: by weight) */
	const char *weight; /* hosts: the value column (sp_value_column; NULL default) */
};

struct sp_heatmap;
struct sp_heatmap *sp_heatmap_new(struct sp_profile *p, const struct sp_heatmap_opts *o);
void sp_heatmap_free(struct sp_heatmap *h);
struct sp_sink *sp_heatmap_sink(struct sp_heatmap *h);
/* The input being read, for messages (not copied). */
void sp_heatmap_set_input(struct sp_heatmap *h, const char *name);
uint64_t sp_heatmap_samples(const struct sp_heatmap *h);
/* Writes the document.  Returns 0, or -1 (err filled) when out failed. */
int sp_heatmap_write(FILE *out, struct sp_heatmap *h, struct sp_err *err);

#endif
