package config

import (
	"strings"
)

// UnknownEnvVar is a FLOE_ environment variable that sets nothing: a
// misspelt name would otherwise be ignored without a word.
type UnknownEnvVar struct {
	Name string
	// Closest is the valid variable it most likely meant ("" when none is
	// close).
	Closest string
}

// String says that the variable sets nothing and what it likely meant.
func (u UnknownEnvVar) String() string {
	msg := "environment variable " + u.Name + " sets nothing: it is not a Floe setting"
	if u.Closest != "" {
		return msg + "; did you mean " + u.Closest + "?"
	}
	return msg + " (docs/configuration.md lists them)"
}

// EnvWarnings are UnknownEnv's findings as sentences: floe serve prints
// them on stderr before anything else (a misspelt variable is the likely
// cause of a configuration error that follows) and the node shows them as
// its "config" problem, since a node on defaults otherwise looks healthy.
func EnvWarnings(env []string) []string {
	var out []string
	for _, u := range UnknownEnv(env) {
		out = append(out, u.String())
	}
	return out
}

// cliEnv are the FLOE_ variables of the command-line clients, which are
// not configuration fields.
var cliEnv = map[string]bool{"FLOE_TOKEN": true, "FLOE_ADDR": true}

// UnknownEnv lists the FLOE_ variables of env (os.Environ() form) that are
// neither a configuration field nor a CLI variable and look like a
// mistake: close to a valid name (FLOE_COMIT_INTERVAL), or under a
// configuration section (FLOE_KAFKA_BOOTSTRAP). Other FLOE_ names (a test
// harness's own, say) are left alone.
func UnknownEnv(env []string) []UnknownEnvVar {
	valid := map[string]bool{}
	sections := map[string]bool{}
	var names []string
	for _, v := range EnvVars() {
		valid[v.Name] = true
		names = append(names, v.Name)
		sec, _, _ := strings.Cut(v.Field, ".")
		sections["FLOE_"+strings.ToUpper(sec)+"_"] = true
	}
	var out []UnknownEnvVar
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, "FLOE_") || valid[k] || cliEnv[k] {
			continue
		}
		closest, dist := "", len(k)
		for _, n := range names {
			if d := editDistance(k, n); d < dist {
				closest, dist = n, d
			}
		}
		underSection := false
		for s := range sections {
			underSection = underSection || strings.HasPrefix(k, s)
		}
		near := dist <= max(2, len(k)/8)
		if p := shortestExtension(names, k); p != "" {
			// A name cut short (FLOE_KAFKA_BOOTSTRAP): the valid name it
			// begins.
			closest, near = p, true
		}
		if !near && !underSection {
			continue
		}
		if !near {
			closest = ""
		}
		out = append(out, UnknownEnvVar{Name: k, Closest: closest})
	}
	return out
}

// shortestExtension is the shortest of names that begins with k+"_".
func shortestExtension(names []string, k string) string {
	best := ""
	for _, n := range names {
		if strings.HasPrefix(n, k+"_") && (best == "" || len(n) < len(best)) {
			best = n
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes; the names
// are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
