module github.com/goshmem/shmem

go 1.26.8
