package reports

import (
	"bytes"
	"runtime"
	"testing"
)

func TestPageMemory(t *testing.T) {
	data := benchPageBytes(10000)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var p Page
	if err := decodePage(bytes.NewReader(data), int64(len(data)), &p); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("body %d bytes, live after decode %d bytes", len(data), ms.HeapAlloc-base)
	runtime.KeepAlive(p)
}
