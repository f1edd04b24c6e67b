package forge

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Verify checks that a delivery comes from the forge holding secret: body
// is the raw request body as received, h its headers. It returns nil, or
// an error wrapping ErrSignature with a sentence naming the header that is
// missing, repeated or wrong (never the secret, never a header's value).
// An empty secret refuses every delivery: no secret, no endpoint.
//
// What each forge sends (every comparison is constant time):
//
//   - Gitea: X-Gitea-Signature, the lowercase hex HMAC-SHA256 of the body
//     keyed with the secret (services/webhook/deliver.go, addDefaultHeaders,
//     in Gitea v1.27). Gitea sends the same MAC as X-Hub-Signature-256
//     "sha256=<hex>"; that one is read only when X-Gitea-Signature is absent.
//   - GitHub: X-Hub-Signature-256, "sha256=" and the hex HMAC-SHA256 of the
//     body (docs.github.com, "Validating webhook deliveries"). The SHA-1
//     X-Hub-Signature alone is refused.
//   - GitLab: see verifyGitLab.
func Verify(t Type, secret string, h http.Header, body []byte) error {
	if secret == "" {
		return fmt.Errorf("%w: the forge has no webhook secret set, so no delivery is accepted; set one in the forge block and in the forge's webhook", ErrSignature)
	}
	switch t {
	case Gitea:
		return verifyGitea(secret, h, body)
	case GitHub:
		return verifyHub(secret, h, body)
	case GitLab:
		return verifyGitLab(secret, h, body)
	}
	return fmt.Errorf("%w: %q is no forge type (gitea, github, gitlab)", ErrSignature, t)
}

// verifyGitea checks X-Gitea-Signature, or X-Hub-Signature-256 when Gitea's
// own header is absent. Gitea sends both headers empty when its webhook
// has no secret.
func verifyGitea(secret string, h http.Header, body []byte) error {
	sig, err := signatureHeader(h, "X-Gitea-Signature")
	if err != nil {
		return err
	}
	if sig == "" {
		return verifyHub(secret, h, body)
	}
	if !hexMACMatches(secret, body, sig) {
		return fmt.Errorf("%w: X-Gitea-Signature is not the body's HMAC-SHA256 with this forge's secret", ErrSignature)
	}
	return nil
}

// verifyHub checks X-Hub-Signature-256: "sha256=" and the hex HMAC-SHA256
// of the body.
func verifyHub(secret string, h http.Header, body []byte) error {
	sig, err := signatureHeader(h, "X-Hub-Signature-256")
	if err != nil {
		return err
	}
	if sig == "" {
		if old, _ := signatureHeader(h, "X-Hub-Signature"); old != "" {
			return fmt.Errorf("%w: the delivery is signed with SHA-1 only (X-Hub-Signature); Switchtender needs X-Hub-Signature-256", ErrSignature)
		}
		return fmt.Errorf("%w: the delivery has no X-Hub-Signature-256 header; set the webhook's secret on the forge", ErrSignature)
	}
	hexSig, ok := strings.CutPrefix(sig, "sha256=")
	if ok && hexSig == "" {
		return fmt.Errorf("%w: the delivery is not signed (X-Hub-Signature-256 is empty): the forge's webhook has no secret; give it the forge block's webhook_secret", ErrSignature)
	}
	if !ok || !hexMACMatches(secret, body, hexSig) {
		return fmt.Errorf("%w: X-Hub-Signature-256 is not \"sha256=\" and the body's HMAC-SHA256 with this forge's secret", ErrSignature)
	}
	return nil
}

// verifyGitLab checks GitLab's two proofs, each against the one secret:
//
//   - X-Gitlab-Token, the webhook's secret token sent as it is
//     (docs.gitlab.com, user/project/integrations/webhooks, "Validate
//     requests with a secret token"), compared in constant time;
//   - webhook-signature, sent when the webhook has a signing token
//     (GitLab merge request 230944, "Add webhook HMAC signing token"): it
//     follows the Standard Webhooks specification, "v1,<base64>" (several
//     may be sent, separated by spaces), the HMAC-SHA256 of
//     "<webhook-id>.<webhook-timestamp>.<body>". GitLab's signing tokens
//     are "whsec_<base64>"; as in Standard Webhooks, the key is the base64
//     after "whsec_", decoded (see standardWebhooksKey).
//
// Each proof the delivery carries must match; at least one must be there.
// The forge block has one secret, so a GitLab webhook with both a secret
// token and a signing token must use the same value for both. The
// timestamp is not compared with the clock (Verify is pure): a replayed
// delivery repeats its id, which the receiver refuses as already seen.
func verifyGitLab(secret string, h http.Header, body []byte) error {
	token, err := signatureHeader(h, "X-Gitlab-Token")
	if err != nil {
		return err
	}
	sig, err := signatureHeader(h, "Webhook-Signature")
	if err != nil {
		return err
	}
	if token == "" && sig == "" {
		return fmt.Errorf("%w: the delivery has neither X-Gitlab-Token nor webhook-signature; set the webhook's secret token (or signing token) on GitLab", ErrSignature)
	}
	if token != "" && !webhookTokenMatches(secret, token) {
		return fmt.Errorf("%w: X-Gitlab-Token is not this forge's secret", ErrSignature)
	}
	if sig != "" {
		return verifyStandardSignature(secret, h, body, sig)
	}
	return nil
}

// verifyStandardSignature checks a Standard Webhooks webhook-signature
// against webhook-id, webhook-timestamp and the body.
func verifyStandardSignature(secret string, h http.Header, body []byte, sig string) error {
	id, err := signatureHeader(h, "Webhook-Id")
	if err != nil {
		return err
	}
	ts, err := signatureHeader(h, "Webhook-Timestamp")
	if err != nil {
		return err
	}
	if id == "" || ts == "" {
		return fmt.Errorf("%w: webhook-signature comes without webhook-id and webhook-timestamp, which it signs", ErrSignature)
	}
	if !isDecimalSeconds(ts) {
		return fmt.Errorf("%w: webhook-timestamp is not a count of seconds", ErrSignature)
	}
	m := hmac.New(sha256.New, standardWebhooksKey(secret))
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	want := m.Sum(nil)
	for _, part := range strings.Fields(sig) {
		version, b64, _ := strings.Cut(part, ",")
		if version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("%w: webhook-signature has no v1 signature of this delivery made with this forge's secret", ErrSignature)
}

// standardWebhooksKey is the HMAC key a Standard Webhooks secret stands for: the
// base64 after "whsec_", decoded; a secret without that prefix (or whose
// rest is not base64) is used as its bytes.
func standardWebhooksKey(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil && len(key) > 0 {
			return key
		}
	}
	return []byte(secret)
}

// hexMACMatches reports whether sig is the hex HMAC-SHA256 of body keyed
// with secret, comparing the MACs in constant time.
func hexMACMatches(secret string, body []byte, sig string) bool {
	got, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// webhookTokenMatches compares a sent token with the secret in constant time,
// whatever their lengths (both are hashed first).
func webhookTokenMatches(secret, token string) bool {
	a, b := sha256.Sum256([]byte(secret)), sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// signatureHeader is the one value of header name ("" when absent or
// empty). A header sent more than once is refused: a forge sends one, and
// which copy a reader takes differs.
func signatureHeader(h http.Header, name string) (string, error) {
	v, err := oneDeliveryHeader(h, name)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrSignature, err)
	}
	return v, nil
}

// errRepeatedDeliveryHeader is a header sent more than once.
var errRepeatedDeliveryHeader = errors.New("a header is sent more than once")

// oneDeliveryHeader is the one value of header name, "" when absent.
func oneDeliveryHeader(h http.Header, name string) (string, error) {
	vs := h.Values(name)
	switch len(vs) {
	case 0:
		return "", nil
	case 1:
		return vs[0], nil
	}
	return "", fmt.Errorf("%w: %s comes %d times; a forge sends it once", errRepeatedDeliveryHeader, name, len(vs))
}

func isDecimalSeconds(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
