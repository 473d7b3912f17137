package world

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The control plane's gRPC server admits a stream only if it carries a
// token derived from the job secret. With TLS on this duplicates the
// mutual-TLS check; with TLS off it is what keeps the listener from
// serving strangers (an eavesdropper on the wire could replay it, which is
// what turning TLS off accepts).
const authKey = "x-goshmem-auth"

func controlToken(secret []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("goshmem control plane v1"))
	return hex.EncodeToString(m.Sum(nil))
}

// tokenCreds attaches the token to every RPC a PE makes.
type tokenCreds struct {
	token  string
	secure bool
}

func (c tokenCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{authKey: c.token}, nil
}

func (c tokenCreds) RequireTransportSecurity() bool { return c.secure }

func checkToken(ctx context.Context, token string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get(authKey) {
		if subtle.ConstantTimeCompare([]byte(v), []byte(token)) == 1 {
			return nil
		}
	}
	return status.Error(codes.Unauthenticated, "goshmem: not a member of this job")
}

func authStream(token string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if err := checkToken(ss.Context(), token); err != nil {
			return err
		}
		return h(srv, ss)
	}
}

func authUnary(token string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if err := checkToken(ctx, token); err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
}
