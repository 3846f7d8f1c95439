// An HTTP server with three handlers of different costs, and its client.
//
//	t35-gohttp serve          listens on 127.0.0.1:0, prints "port N", serves
//	                          /hash, /json, /sort and net/http/pprof's
//	                          /debug/pprof/ until killed
//	t35-gohttp load PORT SEC  two clients for SEC seconds, requests drawn at
//	                          random (each handler's work varies from one
//	                          request to the next, so that no phase keeps in
//	                          step with a sampling rate); prints each
//	                          handler's request count
//	t35-gohttp pprof PORT SEC FILE
//	                          net/http/pprof's CPU profile of SEC seconds
//	                          into FILE
//
// Each handler's work runs in a function named after it (hashWork,
// jsonWork, sortWork), so a profile's inclusive share of each is the
// handler's CPU time.  /sort is a method value (server.sortHandler), which
// Go compiles as a "-fm" wrapper.
package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"
)

type record struct {
	ID    int               `json:"id"`
	Name  string            `json:"name"`
	Score float64           `json:"score"`
	Tags  []string          `json:"tags"`
	Attrs map[string]string `json:"attrs"`
}

func arg(r *http.Request) int {
	n, _ := strconv.Atoi(r.URL.Query().Get("n"))
	if n < 1 {
		n = 1
	}
	return n
}

//go:noinline
func hashWork(n int) [32]byte {
	buf := make([]byte, 8192)
	var s [32]byte
	for i := 0; i < n; i++ {
		s = sha256.Sum256(buf)
		buf[i%len(buf)] ^= s[0]
	}
	return s
}

//go:noinline
func jsonWork(n int) int {
	recs := make([]record, n)
	for i := range recs {
		recs[i] = record{ID: i, Name: "item-" + strconv.Itoa(i), Score: float64(i) / 3,
			Tags:  []string{"a", "bb", strconv.Itoa(i % 7)},
			Attrs: map[string]string{"k": strconv.Itoa(i), "z": "v"}}
	}
	b, _ := json.Marshal(recs)
	var back []record
	_ = json.Unmarshal(b, &back)
	return len(b) + len(back)
}

//go:noinline
func sortWork(n int, seed int64) int {
	rng := rand.New(rand.NewSource(seed))
	a := make([]int, n)
	for i := range a {
		a[i] = rng.Int()
	}
	sort.Ints(a)
	s := make([]string, n/4)
	for i := range s {
		s[i] = strconv.Itoa(a[i*4] % 100000)
	}
	sort.Strings(s)
	return a[0] + len(s)
}

type server struct{ seed int64 }

func (s *server) sortHandler(w http.ResponseWriter, r *http.Request) {
	s.seed++
	fmt.Fprintln(w, sortWork(arg(r), s.seed))
}

func serve() {
	s := &server{}
	http.HandleFunc("/hash", func(w http.ResponseWriter, r *http.Request) {
		h := hashWork(arg(r))
		fmt.Fprintf(w, "%x\n", h[:4])
	})
	http.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, jsonWork(arg(r)))
	})
	http.HandleFunc("/sort", s.sortHandler)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("port %d\n", ln.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	fmt.Fprintln(os.Stderr, http.Serve(ln, nil))
	os.Exit(1)
}

func load(port string, sec float64) {
	// Request sizes drawn so that each handler's mean cost differs: hash
	// the largest per request, json next, sort the least.
	kinds := []struct {
		path   string
		lo, hi int
	}{{"/hash", 60, 300}, {"/json", 150, 700}, {"/sort", 10000, 50000}}
	var mu sync.Mutex
	count := make([]int, len(kinds))
	end := time.Now().Add(time.Duration(sec * float64(time.Second)))
	var wg sync.WaitGroup
	for c := 0; c < 2; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(c + 1)))
			cl := &http.Client{}
			for time.Now().Before(end) {
				k := rng.Intn(len(kinds))
				n := kinds[k].lo + rng.Intn(kinds[k].hi-kinds[k].lo)
				resp, err := cl.Get("http://127.0.0.1:" + port + kinds[k].path + "?n=" + strconv.Itoa(n))
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				// a pause of 0-3 ms: the server is not busy all the time
				time.Sleep(time.Duration(rng.Intn(3000)) * time.Microsecond)
				mu.Lock()
				count[k]++
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	for k := range kinds {
		fmt.Printf("%s %d\n", kinds[k].path, count[k])
	}
}

func main() {
	if len(os.Args) >= 2 && os.Args[1] == "serve" {
		serve()
	} else if len(os.Args) >= 4 && os.Args[1] == "load" {
		sec, _ := strconv.ParseFloat(os.Args[3], 64)
		load(os.Args[2], sec)
	} else if len(os.Args) >= 5 && os.Args[1] == "pprof" {
		resp, err := http.Get("http://127.0.0.1:" + os.Args[2] + "/debug/pprof/profile?seconds=" + os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 || os.WriteFile(os.Args[4], b, 0o644) != nil {
			fmt.Fprintln(os.Stderr, "pprof:", resp.Status, err)
			os.Exit(1)
		}
	} else {
		fmt.Fprintln(os.Stderr, "usage: t35-gohttp serve | load PORT SECONDS | pprof PORT SECONDS FILE")
		os.Exit(2)
	}
}
