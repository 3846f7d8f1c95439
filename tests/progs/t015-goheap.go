// t015-goheap.go FILE — writes runtime/pprof's heap profile (sample types
// alloc_objects, alloc_space, inuse_objects, inuse_space) of a program that
// builds a map of strings, for t0156 (pfold --value=alloc_space heap.pb.gz).
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
)

var table = map[string]string{}

//go:noinline
func fill(n int) {
	for i := 0; i < n; i++ {
		k := strconv.Itoa(i)
		table[k] = k + ":" + string(make([]byte, 512+i%2048))
	}
}

func main() {
	runtime.MemProfileRate = 4096
	fill(3000)
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		panic(err)
	}
	f.Close()
}
