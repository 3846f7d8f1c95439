// Writes its own CPU and heap profiles with runtime/pprof.
package main

import (
	"context"
	"crypto/sha256"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

var sink [][]byte

//go:noinline
func hashLoop(d time.Duration) int {
	buf := make([]byte, 4096)
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); n++ {
		s := sha256.Sum256(buf)
		buf[0] = s[0]
	}
	return n
}

//go:noinline
func sortLoop(d time.Duration) int {
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); n++ {
		a := make([]int, 512)
		for i := range a {
			a[i] = (i * 7919) % 512
		}
		for i := 1; i < len(a); i++ {
			for j := i; j > 0 && a[j] < a[j-1]; j-- {
				a[j], a[j-1] = a[j-1], a[j]
			}
		}
	}
	return n
}

//go:noinline
func allocate(n int) {
	for i := 0; i < n; i++ {
		sink = append(sink, make([]byte, 1024+i%4096))
	}
}

func main() {
	runtime.MemProfileRate = 4096
	cpu, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		panic(err)
	}
	done := make(chan bool)
	go func() {
		pprof.Do(context.Background(), pprof.Labels("worker", "sort"), func(context.Context) {
			sortLoop(time.Second)
		})
		done <- true
	}()
	hashLoop(time.Second)
	<-done
	allocate(2000)
	pprof.StopCPUProfile()
	cpu.Close()
	heap, err := os.Create(os.Args[2])
	if err != nil {
		panic(err)
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(heap); err != nil {
		panic(err)
	}
	heap.Close()
}
