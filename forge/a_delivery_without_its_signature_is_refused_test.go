package forge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// refusedSignature fails the test unless err wraps ErrSignature and names none of
// the secrets.
func refusedSignature(t *testing.T, err error, secrets ...string) {
	t.Helper()
	if !errors.Is(err, ErrSignature) {
		t.Fatalf("Verify = %v, want ErrSignature", err)
	}
	for _, s := range append(secrets, testSecrets[Gitea], testSecrets[GitLab]) {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Fatalf("the error names a secret: %v", err)
		}
	}
}

func hexMAC(key string, body []byte) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// signedDeliveries is one recorded delivery per forge.
var signedDeliveries = map[Type]string{Gitea: "pull_request_opened", GitHub: "pull_request_opened", GitLab: "merge_request_open"}

func TestADeliveryWithAnotherSecretIsRefused(t *testing.T) {
	for forge, name := range signedDeliveries {
		t.Run(string(forge), func(t *testing.T) {
			h, body := loadDelivery(t, forge, name)
			refusedSignature(t, Verify(forge, "another-secret", h, body), "another-secret")
		})
	}
}

func TestASignatureOfAnotherBodyIsRefused(t *testing.T) {
	for forge, name := range signedDeliveries {
		t.Run(string(forge), func(t *testing.T) {
			h, body := loadDelivery(t, forge, name)
			other := []byte(strings.Replace(string(body), `"opened"`, `"closed"`, 1))
			if forge == GitLab {
				// GitLab's token signs no body: only its signature does.
				h, body = loadDelivery(t, forge, "merge_request_open_signed")
				other = []byte(strings.Replace(string(body), `"open"`, `"close"`, 1))
			}
			if string(other) == string(body) {
				t.Fatal("the body was not changed")
			}
			refusedSignature(t, Verify(forge, testSecrets[forge], h, other))
		})
	}
}

func TestADeliveryWithoutItsSignatureHeaderIsRefused(t *testing.T) {
	strip := map[Type][]string{
		Gitea:  {"X-Gitea-Signature", "X-Hub-Signature-256", "X-Hub-Signature", "X-Gogs-Signature"},
		GitHub: {"X-Hub-Signature-256", "X-Hub-Signature"},
		GitLab: {"X-Gitlab-Token"},
	}
	for forge, name := range signedDeliveries {
		t.Run(string(forge), func(t *testing.T) {
			h, body := loadDelivery(t, forge, name)
			for _, k := range strip[forge] {
				h.Del(k)
			}
			refusedSignature(t, Verify(forge, testSecrets[forge], h, body))
		})
	}
}

// Gitea sends its headers empty when its webhook has no secret.
func TestAnEmptySignatureHeaderIsRefused(t *testing.T) {
	h, body := loadDelivery(t, Gitea, "pull_request_opened")
	h.Set("X-Gitea-Signature", "")
	h.Set("X-Hub-Signature-256", "")
	refusedSignature(t, Verify(Gitea, testSecrets[Gitea], h, body))
}

func TestADeliverySignedWithSHA1OnlyIsRefused(t *testing.T) {
	for _, forge := range []Type{Gitea, GitHub} {
		t.Run(string(forge), func(t *testing.T) {
			h, body := loadDelivery(t, forge, "pull_request_opened")
			h.Del("X-Gitea-Signature")
			h.Del("X-Hub-Signature-256")
			if h.Get("X-Hub-Signature") == "" {
				t.Fatal("the recorded delivery has no SHA-1 signature to keep")
			}
			err := Verify(forge, testSecrets[forge], h, body)
			refusedSignature(t, err)
			if !strings.Contains(err.Error(), "SHA-1") {
				t.Errorf("the error does not say SHA-1 is not enough: %v", err)
			}
		})
	}
}

func TestAGitLabTokenDifferingInItsLastByteIsRefused(t *testing.T) {
	h, body := loadDelivery(t, GitLab, "merge_request_open")
	secret := testSecrets[GitLab]
	h.Set("X-Gitlab-Token", secret[:len(secret)-1]+"A")
	refusedSignature(t, Verify(GitLab, secret, h, body))
	h.Set("X-Gitlab-Token", secret+"=")
	refusedSignature(t, Verify(GitLab, secret, h, body))
}

func TestAnEmptySecretRefusesEveryDelivery(t *testing.T) {
	for forge, name := range signedDeliveries {
		t.Run(string(forge), func(t *testing.T) {
			h, body := loadDelivery(t, forge, name)
			// Signed with the empty key, as a forge without a secret would.
			h.Set("X-Gitea-Signature", hexMAC("", body))
			h.Set("X-Hub-Signature-256", "sha256="+hexMAC("", body))
			h.Set("X-Gitlab-Token", "")
			refusedSignature(t, Verify(forge, "", h, body))
		})
	}
}

func TestGiteasOwnSignatureDecidesWhenItIsSent(t *testing.T) {
	h, body := loadDelivery(t, Gitea, "pull_request_opened")
	h.Set("X-Gitea-Signature", hexMAC("another-secret", body))
	refusedSignature(t, Verify(Gitea, testSecrets[Gitea], h, body))

	h, body = loadDelivery(t, Gitea, "pull_request_opened")
	h.Del("X-Gitea-Signature")
	if err := Verify(Gitea, testSecrets[Gitea], h, body); err != nil {
		t.Errorf("a Gitea delivery signed with X-Hub-Signature-256 only is refused: %v", err)
	}
}

func TestASignatureHeaderSentTwiceIsRefused(t *testing.T) {
	h, body := loadDelivery(t, GitHub, "pull_request_opened")
	h.Add("X-Hub-Signature-256", "sha256="+hexMAC("another-secret", body))
	refusedSignature(t, Verify(GitHub, testSecrets[GitHub], h, body))
}

func TestAGitHubSignatureWithoutItsPrefixIsRefused(t *testing.T) {
	h, body := loadDelivery(t, GitHub, "pull_request_opened")
	h.Set("X-Hub-Signature-256", hexMAC(testSecrets[GitHub], body))
	refusedSignature(t, Verify(GitHub, testSecrets[GitHub], h, body))
}

// standardSignature signs id.ts.body the way GitLab's signing token does.
func standardSignature(key []byte, id, ts string, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func TestAGitLabSignatureMustSignItsIdTimestampAndBody(t *testing.T) {
	secret := testSecrets[GitLab]
	key := standardWebhooksKey(secret)
	if string(key) != "switchtender-test-signing-key-32" {
		t.Fatalf("the whsec_ secret stands for the key %q", key)
	}
	cases := map[string]func(h http.Header, body []byte){
		"another id":               func(h http.Header, body []byte) { h.Set("Webhook-Id", "1f0e6a6c-8e5b-4a43-9c1d-2b7d0c9e0aff") },
		"another timestamp":        func(h http.Header, body []byte) { h.Set("Webhook-Timestamp", "1772442901") },
		"no timestamp":             func(h http.Header, body []byte) { h.Del("Webhook-Timestamp") },
		"no id":                    func(h http.Header, body []byte) { h.Del("Webhook-Id") },
		"a timestamp not a number": func(h http.Header, body []byte) { h.Set("Webhook-Timestamp", "17724429x0") },
		"signed with the raw secret": func(h http.Header, body []byte) {
			h.Set("Webhook-Signature", standardSignature([]byte(secret), h.Get("Webhook-Id"), h.Get("Webhook-Timestamp"), body))
		},
		"another version only": func(h http.Header, body []byte) {
			h.Set("Webhook-Signature", strings.Replace(h.Get("Webhook-Signature"), "v1,", "v1a,", 1))
		},
		"a right token but a wrong signature": func(h http.Header, body []byte) {
			h.Set("X-Gitlab-Token", secret)
			h.Set("Webhook-Signature", standardSignature(key, "other", h.Get("Webhook-Timestamp"), body))
		},
		"a right signature but a wrong token": func(h http.Header, body []byte) { h.Set("X-Gitlab-Token", "wrong") },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			h, body := loadDelivery(t, GitLab, "merge_request_open_signed")
			if err := Verify(GitLab, secret, h, body); err != nil {
				t.Fatalf("the recorded signed delivery is refused: %v", err)
			}
			change(h, body)
			refusedSignature(t, Verify(GitLab, secret, h, body))
		})
	}
}

func TestAGitLabSignatureListIsAcceptedWhenOneOfItsSignaturesMatches(t *testing.T) {
	h, body := loadDelivery(t, GitLab, "merge_request_open_signed")
	good := h.Get("Webhook-Signature")
	other := standardSignature([]byte("rotated-away-key"), h.Get("Webhook-Id"), h.Get("Webhook-Timestamp"), body)
	h.Set("Webhook-Signature", other+" "+good)
	if err := Verify(GitLab, testSecrets[GitLab], h, body); err != nil {
		t.Errorf("a signature list holding the right signature is refused: %v", err)
	}
	h.Set("X-Gitlab-Token", testSecrets[GitLab])
	if err := Verify(GitLab, testSecrets[GitLab], h, body); err != nil {
		t.Errorf("a delivery with a right token and a right signature is refused: %v", err)
	}
}

func TestAnUnknownForgeTypeIsRefused(t *testing.T) {
	h, body := loadDelivery(t, GitHub, "pull_request_opened")
	refusedSignature(t, Verify("bitbucket", testSecrets[GitHub], h, body))
}
