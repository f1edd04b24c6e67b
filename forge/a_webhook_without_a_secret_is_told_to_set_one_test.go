package forge

import (
	"strings"
	"testing"
)

// A Gitea webhook with no secret sends X-Gitea-Signature empty and
// X-Hub-Signature-256 as a bare "sha256=" (seen from Gitea v1.27): the
// refusal says the delivery is unsigned and to give the webhook the forge
// block's webhook_secret, not that a signature is wrong.
func TestAWebhookWithoutASecretIsToldToSetOne(t *testing.T) {
	h, body := loadDelivery(t, Gitea, "pull_request_opened")
	h.Set("X-Gitea-Signature", "")
	h.Set("X-Hub-Signature-256", "sha256=")
	h.Set("X-Hub-Signature", "sha1=")
	err := Verify(Gitea, testSecrets[Gitea], h, body)
	refusedSignature(t, err)
	for _, want := range []string{"not signed", "no secret", "webhook_secret"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
}
