package main

import (
	"path/filepath"
	"testing"

	"github.com/goshmem/shmem/sim"
)

// TestPredict: every algorithm gets a positive time, a barrier at 2 PEs
// is one round of ModelSHM(), and the CSV and PNG are written.
func TestPredict(t *testing.T) {
	pts, err := predict(sim.ModelSHM(), 4, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != len(algorithms) {
		t.Fatalf("%d points for %d algorithms", len(pts), len(algorithms))
	}
	for _, p := range pts {
		if p.t <= 0 || p.npes != 4 || p.model != "shm" {
			t.Errorf("bad point %+v", p)
		}
	}
	two, err := predict(sim.ModelSHM(), 2, false)
	if err != nil {
		t.Fatal(err)
	}
	m := sim.ModelSHM().Intra
	if want := int64(m.Overhead + 8*m.PerByte + m.Latency + m.Wake); two[0].t.Nanoseconds() != want {
		t.Fatalf("barrier at 2 PEs: %v, want %dns", two[0].t, want)
	}
	dir := t.TempDir()
	if err := writeCSV(filepath.Join(dir, "p.csv"), pts); err != nil {
		t.Fatal(err)
	}
	if err := drawPNG(filepath.Join(dir, "p.png"), append(pts, two...)); err != nil {
		t.Fatal(err)
	}
}
