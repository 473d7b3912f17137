// Package secure protects every TCP connection goshmem opens: it builds the
// TLS 1.3 configurations (an ephemeral self-signed certificate checked by its
// pin, or CA-verified mutual TLS from PEM files with an optional CRL) and runs
// the job-secret challenge-response that must succeed before either side
// processes any other byte.
//
// Every failure wraps errs.ErrTLS; a handshake that ran past its deadline
// also wraps errs.ErrTimeout, one whose peer serves another service
// (Service) ErrOtherService, and one whose server refused this side's job
// secret ErrRefused (a server says so rather than merely closing, so that a
// client can retry a connection that was only cut).
package secure
