package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretsFromFileAndVariable: the client secret and the subscription
// key can be given without a flag, which any user of the machine reads in
// the process list: in a file or a variable.
func TestSecretsFromFileAndVariable(t *testing.T) {
	token := func(url, secret string) int {
		t.Helper()
		resp, err := http.Post(url+"/oauth/token", "application/json",
			strings.NewReader(`{"grant_type":"client_credentials","client_id":"cid","client_secret":"`+secret+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, stop := start(t, "-client-id", "cid", "-client-secret-file", file)
	if token(url, "from-file") != http.StatusOK || token(url, "partner-test-secret") == http.StatusOK {
		t.Errorf("-client-secret-file: the fake does not take the file's secret (only)")
	}
	stop()

	t.Setenv("PARTNERFAKE_CLIENT_SECRET", "from-variable")
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("key-from-file\n"), 0o600)
	url, stop = start(t, "-client-id", "cid", "-subscription-key-file", keyFile)
	defer stop()
	if token(url, "from-variable") == http.StatusOK {
		t.Errorf("-subscription-key-file: a token request without the key was accepted")
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/oauth/token",
		strings.NewReader(`{"grant_type":"client_credentials","client_id":"cid","client_secret":"from-variable"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Ocp-Apim-Subscription-Key", "key-from-file")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("PARTNERFAKE_CLIENT_SECRET with the file's key: %d, want 200", resp.StatusCode)
	}

	if err := run(context.Background(), []string{"-client-secret", "x", "-client-secret-file", file}, &bytes.Buffer{}); exitCode(err) != 2 {
		t.Errorf("both -client-secret and -client-secret-file: %v, want a usage error", err)
	}
}
