package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/goshmem/shmem"
)

func main() {
	p, err := shmem.Init(context.Background())
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	if err := p.BarrierAll(); err != nil {
		fmt.Println(err)
	}
	t := time.Now()
	err = p.Finalize()
	fmt.Printf("PE %d Finalize %v err=%v\n", p.MyPE(), time.Since(t), err)
}
