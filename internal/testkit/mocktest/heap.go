package mocktest

import (
	"runtime/metrics"
	"sync"
	"time"
)

// HeapObjects returns /memory/classes/heap/objects:bytes (runtime/metrics:
// the bytes of heap objects, live or not yet swept), what the memory
// benchmarks read.
func HeapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// SampleHeap reads HeapObjects every interval until the returned function
// is called, which returns the most it read (a last reading included):
// the heap while the work between them runs, not after.
func SampleHeap(interval time.Duration) func() uint64 {
	done := make(chan struct{})
	var top uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			top = max(top, HeapObjects())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return max(top, HeapObjects())
	}
}
