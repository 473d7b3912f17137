package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fabricated = header + `
goshmem,udma,put,8,10000,1.0,8.0
goshmem,udma,put,8,10000,3.0,2.0
goshmem,udma,put,8,10000,2.0,4.0
oshmem,shm,put,8,10000,0.5,16.0
oshmem,shm,put,8,10000,1.5,8.0
goshmem,udma,put,1048576,100,100,10000
oshmem,shm,put,1048576,100,50,20000
goshmem,tcp-tls,barrier,0,1000,40,0
oshmem,tcp,barrier,0,1000,10,0
oshmem,tcp,get,8,10000,20,0.4
goshmem,rdma,put,8,1,1,1
`

func fabricatedStats(t *testing.T) map[key]stat {
	t.Helper()
	rows, err := readCSV(strings.NewReader(fabricated))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 11 {
		t.Fatalf("got %d rows, want 11", len(rows))
	}
	return medians(rows)
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{7}, 7}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestMediansPerKey(t *testing.T) {
	stats := fabricatedStats(t)
	g := stats[key{"goshmem", "udma", "put", 8}]
	if g.latencyUS != 2 || g.bandwidthMBps != 4 || g.runs != 3 {
		t.Errorf("goshmem udma put 8 = %+v, want latency 2, bw 4, 3 runs", g)
	}
	o := stats[key{"oshmem", "shm", "put", 8}]
	if o.latencyUS != 1 || o.bandwidthMBps != 12 || o.runs != 2 {
		t.Errorf("oshmem shm put 8 = %+v, want latency 1, bw 12, 2 runs", o)
	}
	if len(stats) != 8 {
		t.Errorf("got %d keys, want 8", len(stats))
	}
}

func TestGroupsFollowPairingTable(t *testing.T) {
	gs := groups()
	if len(gs) != 3 || gs[0].oshmem != "shm" || gs[1].oshmem != "shm-long" || gs[2].oshmem != "tcp" {
		t.Fatalf("groups = %+v", gs)
	}
	if strings.Join(gs[0].goshmem, ",") != "udma,sim" || strings.Join(gs[1].goshmem, ",") != "udma-long" ||
		strings.Join(gs[2].goshmem, ",") != "tcp,tcp-tls,tcp-park,tcp-hosts,tcp-hosts-tls,tcp-hosts-park" {
		t.Errorf("groups = %+v", gs)
	}
	if !paired("goshmem", "sim") || !paired("oshmem", "tcp") || !paired("goshmem", "tcp-hosts") || !paired("goshmem", "tcp-hosts-tls") ||
		!paired("goshmem", "udma-long") || !paired("oshmem", "shm-long") || paired("goshmem", "shm") || paired("goshmem", "rdma") {
		t.Error("paired() disagrees with pairings()")
	}
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := writeMarkdown(&b, fabricatedStats(t), "", ""); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"## put\n\n### goshmem udma vs oshmem shm\n",
		"| size | goshmem µs | oshmem µs | ratio | goshmem MB/s | oshmem MB/s | bw ratio |",
		"| 8 B | 2.000 | 1.000 | 2.000 | 4.000 | 12.00 | 0.333 |\n",
		"| 1 MiB | 100.0 | 50.00 | 2.000 | 10000 | 20000 | 0.500 |\n",
		"### goshmem tcp-tls vs oshmem tcp\n\n| size | goshmem µs | oshmem µs | ratio |\n|---:|---:|---:|---:|\n| 0 B | 40.00 | 10.00 | 4.000 |\n",
		"### oshmem tcp (no goshmem counterpart measured)\n",
		"| 8 B | — | 20.00 | — | — | 0.400 | — |\n",
		"Not in the pairing table, so not shown: goshmem/rdma.\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q\n%s", want, md)
		}
	}
	// sim has no rows, and shm is already compared with udma.
	for _, absent := range []string{"goshmem sim", "oshmem shm (no goshmem"} {
		if strings.Contains(md, absent) {
			t.Errorf("markdown has %q", absent)
		}
	}
	if strings.Index(md, "## put") > strings.Index(md, "## get") ||
		strings.Index(md, "## get") > strings.Index(md, "## barrier") {
		t.Error("benches not in osu.c order")
	}
}

func TestReadCSVRejects(t *testing.T) {
	for name, in := range map[string]string{
		"header":   "impl,transport,bench\n",
		"short":    header + "\noshmem,shm,put,8,1,1\n",
		"negative": header + "\noshmem,shm,put,8,1,-1,0\n",
		"nan":      header + "\noshmem,shm,put,8,1,NaN,0\n",
		"size":     header + "\noshmem,shm,put,x,1,1,0\n",
		"empty":    header + "\n,shm,put,8,1,1,0\n",
	} {
		if _, err := readCSV(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted %q", name, in)
		}
	}
}

func TestFmtAndSizeLabel(t *testing.T) {
	for v, want := range map[float64]string{0.0307: "0.031", 2.5: "2.500", 36.25: "36.25", 123.44: "123.4", 21168.4: "21168"} {
		if got := fmtNum(v); got != want {
			t.Errorf("fmtNum(%v) = %q, want %q", v, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1: "1 B", 1536: "1536 B", 2048: "2 KiB", 4 << 20: "4 MiB"} {
		if got := sizeLabel(n); got != want {
			t.Errorf("sizeLabel(%d) = %q, want %q", n, got, want)
		}
	}
}

func assertPNG(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 1000 || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("%s: %d bytes, not a PNG", path, len(data))
	}
}

func TestPlotsWritten(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plot.png")
	if err := writePlots(path, fabricatedStats(t)); err != nil {
		t.Fatal(err)
	}
	assertPNG(t, path)
	// No data at all must still give a picture, not a log-scale panic.
	empty := filepath.Join(dir, "empty.png")
	if err := writePlots(empty, map[key]stat{}); err != nil {
		t.Fatal(err)
	}
	assertPNG(t, empty)
}

// TestSampleCSV runs the whole tool on the committed OSHMEM sample from a real run.
func TestSampleCSV(t *testing.T) {
	dir := t.TempDir()
	out, png := filepath.Join(dir, "B.md"), filepath.Join(dir, "plot.png")
	sample := filepath.Join("..", "oshmem", "sample.csv")
	if err := run([]string{"-in", sample + "," + sample, "-out", out, "-png", png}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## put\n", "### oshmem shm (no goshmem", "### oshmem tcp (no goshmem", "## barrier\n", "## reduce_f64\n"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	assertPNG(t, png)
}

func FuzzReadCSV(f *testing.F) {
	f.Add([]byte(fabricated))
	f.Add([]byte(header + "\noshmem,shm,put,8,1,1e308,0\n"))
	f.Add([]byte(header + "\n\"a\"\"b\",shm,put,8,1,1,0\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rows, err := readCSV(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.size < 0 || r.latencyUS < 0 || r.bandwidthMBps < 0 ||
				math.IsInf(r.latencyUS, 0) || math.IsNaN(r.bandwidthMBps) {
				t.Fatalf("accepted bad row %+v", r)
			}
		}
		var b bytes.Buffer
		if err := writeMarkdown(&b, medians(rows), "", ""); err != nil {
			t.Fatal(err)
		}
	})
}

func TestTargetVerdicts(t *testing.T) {
	stats := map[key]stat{
		{implGoshmem, "udma", "put", 8}:                 {latencyUS: 0.01},
		{implOshmem, "shm", "put", 8}:                   {latencyUS: 0.04},
		{implGoshmem, "udma", "put", 1 << 20}:           {bandwidthMBps: 100},
		{implOshmem, "shm", "put", 1 << 20}:             {bandwidthMBps: 100},
		{implGoshmem, "udma", "put", 2 << 20}:           {bandwidthMBps: 90},
		{implOshmem, "shm", "put", 2 << 20}:             {bandwidthMBps: 100},
		{implGoshmem, "udma-long", "put", 64 << 10}:     {bandwidthMBps: 95},
		{implOshmem, "shm-long", "put", 64 << 10}:       {bandwidthMBps: 100},
		{implGoshmem, "udma-long", "put", 128 << 10}:    {bandwidthMBps: 101},
		{implOshmem, "shm-long", "put", 128 << 10}:      {bandwidthMBps: 100},
		{implGoshmem, "udma-long", "put", 256 << 10}:    {bandwidthMBps: 102},
		{implOshmem, "shm-long", "put", 256 << 10}:      {bandwidthMBps: 100},
		{implGoshmem, "udma-long", "put", 512 << 10}:    {bandwidthMBps: 103},
		{implOshmem, "shm-long", "put", 512 << 10}:      {bandwidthMBps: 100},
		{implGoshmem, "udma-long", "put", 1 << 20}:      {bandwidthMBps: 104},
		{implOshmem, "shm-long", "put", 1 << 20}:        {bandwidthMBps: 100},
		{implGoshmem, "udma-long", "put", 2 << 20}:      {bandwidthMBps: 105},
		{implOshmem, "shm-long", "put", 2 << 20}:        {bandwidthMBps: 100},
		{implGoshmem, "udma-long", "put", 4 << 20}:      {bandwidthMBps: 106},
		{implOshmem, "shm-long", "put", 4 << 20}:        {bandwidthMBps: 100},
		{implGoshmem, "udma", "put", 4 << 20}:           {bandwidthMBps: 200},
		{implOshmem, "shm", "put", 4 << 20}:             {bandwidthMBps: 100},
		{implGoshmem, "tcp", "get", 8}:                  {latencyUS: 30},
		{implGoshmem, "tcp", "tcp_rtt", 8}:              {latencyUS: 60},
		{implGoshmem, "tcp", "tcp_rtt_poll", 8}:         {latencyUS: 20},
		{implOshmem, "tcp", "get", 8}:                   {latencyUS: 10},
		{implGoshmem, "tcp-tls", "atomic_fetch_add", 8}: {latencyUS: 9},
		{implGoshmem, "tcp", "atomic_fetch_add", 8}:     {latencyUS: 12},
		{implOshmem, "tcp", "atomic_fetch_add", 8}:      {latencyUS: 10},
	}
	fetchAdd := map[string]bool{}
	for _, tg := range targets() {
		r, _, _, met, ok := tg.verdict(stats)
		switch tg.what {
		case "put+quiet 8 B, shared memory":
			if !ok || r != 0.25 || !met {
				t.Errorf("%s: ratio %v met %v ok %v, want 0.25 true true", tg.what, r, met, ok)
			}
		case "put bandwidth 1-4 MiB, shared memory":
			if !ok || r != 0.9 || met {
				t.Errorf("%s: ratio %v met %v ok %v, want the worst size 0.9, not met", tg.what, r, met, ok)
			}
		case "get 8 B vs raw TCP round trip, same read mode":
			if tg.goshmem == "tcp" && (!ok || r != 1.5 || met) {
				t.Errorf("%s: ratio %v met %v ok %v, want 1.5 against goshmem's own tcp_rtt_poll row (not the parked tcp_rtt), not met", tg.what, r, met, ok)
			}
		case "get 8 B, TCP":
			if tg.goshmem == "tcp" && (!ok || r != 3) {
				t.Errorf("%s: ratio %v ok %v, want 3 against OSHMEM", tg.what, r, ok)
			}
		case "fetch-add, TCP":
			fetchAdd[tg.goshmem] = true
			want := map[string]float64{"tcp": 1.2, "tcp-tls": 0.9}[tg.goshmem]
			if tg.goshmem != "tcp-park" && (!ok || r != want || met != (want <= 1)) {
				t.Errorf("%s over %s: ratio %v met %v ok %v, want %v against OSHMEM's TCP fetch-add", tg.what, tg.goshmem, r, met, ok, want)
			}
		case "the same, long windows (not the goal's OSU method; compare.sh's LONG_ITERS)":
			if !ok || r != 0.95 || met {
				t.Errorf("%s: ratio %v met %v ok %v, want the long rows' worst size 0.95, not met", tg.what, r, met, ok)
			}
		case "get 8 B, shared memory":
			if ok {
				t.Errorf("%s: no data but ok", tg.what)
			}
		}
	}
	if !fetchAdd["tcp"] || !fetchAdd["tcp-tls"] {
		t.Errorf("fetch-add over TCP targets for %v, want tcp and tcp-tls", fetchAdd)
	}
	var b strings.Builder
	writeTargets(&b, stats)
	if !strings.Contains(b.String(), "| 0.250 | ≤ 0.500 | yes |") || !strings.Contains(b.String(), "not measured") {
		t.Errorf("targets table:\n%s", b.String())
	}
}

func TestRawRefsStateBothRoundTrips(t *testing.T) {
	stats := map[key]stat{
		{implGoshmem, "tcp", "put", 8}:          {latencyUS: 10},
		{implGoshmem, "tcp", "get", 8}:          {latencyUS: 12},
		{implGoshmem, "tcp", "tcp_rtt", 8}:      {latencyUS: 40},
		{implGoshmem, "tcp", "tcp_rtt_poll", 8}: {latencyUS: 8},
	}
	var b strings.Builder
	writeRawRefs(&b, stats)
	want := "| tcp | 8.000 | 40.00 | 1.250 | 1.500 | 0.250 | 0.300 |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("raw references table lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	writeRawRefs(&b, map[key]stat{})
	if b.Len() != 0 {
		t.Errorf("no raw rows gave a table:\n%s", b.String())
	}
}

func TestCeilingSetsTLSPutBesideBothReferences(t *testing.T) {
	mib := int64(1 << 20)
	stats := map[key]stat{
		{implGoshmem, "tcp-tls", "put", mib}:            {bandwidthMBps: 1500},
		{implGoshmem, "tcp-tls", "tls_bw_ceiling", mib}: {bandwidthMBps: 2000},
		{implOshmem, "tcp", "put", mib}:                 {bandwidthMBps: 1000},
	}
	var b strings.Builder
	writeCeiling(&b, stats)
	want := "| tcp-tls | 1500 | 1000 | 2000 | 1.500 | 0.750 | 2.000 |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("ceiling table lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	delete(stats, key{implGoshmem, "tcp-tls", "tls_bw_ceiling", mib})
	writeCeiling(&b, stats)
	if b.Len() != 0 {
		t.Errorf("no ceiling row gave a table:\n%s", b.String())
	}
}

// TestParkedRowsAreNotGoals checks that a parked goshmem measured against
// OSHMEM, which has no parked mode, is shown but never judged, while the
// parked mode's same-mode raw row still is.
func TestParkedRowsAreNotGoals(t *testing.T) {
	stats := map[key]stat{
		{implGoshmem, "tcp-park", "put", 8}:          {latencyUS: 30},
		{implOshmem, "tcp", "put", 8}:                {latencyUS: 20},
		{implGoshmem, "tcp-park", "tcp_rtt_poll", 8}: {latencyUS: 28},
	}
	var b strings.Builder
	writeTargets(&b, stats)
	out := b.String()
	if !strings.Contains(out, "| put+quiet 8 B, TCP | tcp-park | tcp | 30.00 µs | 20.00 µs | 1.500 | (≤ 1.000) | not a goal: modes differ |") {
		t.Errorf("parked row against OSHMEM not shown as informational:\n%s", out)
	}
	if !strings.Contains(out, "| put+quiet 8 B vs raw TCP round trip, same read mode | tcp-park | tcp-park | 30.00 µs | 28.00 µs | 1.071 | ≤ 1.300 | yes |") {
		t.Errorf("parked same-mode row not judged:\n%s", out)
	}
}
