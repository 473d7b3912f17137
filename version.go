package shmem

// Version is goshmem's own release version (semantic versioning); the
// OpenSHMEM specification version it follows is InfoGetVersion.
const Version = "0.1.0"
