package admin

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/floe-io/floe/proto/auth"
)

// Operator commands from the console's table page. Each calls the same
// Backend method as the API's RPC, with the session's caller in the
// context (WithCaller), so a pause or rewind records who asked exactly as
// an API call does; errors map to the API's HTTP statuses (apiError).

// confirmView asks for a second, explicit POST before a destructive
// command (a rewind, a resume past the bad record).
type confirmView struct {
	page
	Table   string
	Action  string
	Warning string
	Fields  []formField
}

type formField struct{ Name, Value string }

// errConsoleScope refuses an operator command from a read session.
var errConsoleScope = fmt.Errorf("%w: acting on a table needs an admin token", auth.ErrScope)

func (c *console) action(w http.ResponseWriter, r *http.Request, sess consoleSession) {
	if !sess.admin() {
		c.refuse(w, r, http.StatusForbidden, errConsoleScope)
		return
	}
	table, act := r.PathValue("table"), r.PathValue("action")
	ctx := WithCaller(r.Context(), sess.who)
	confirmed := r.PostFormValue("confirm") == "yes"
	var res any
	var err error
	switch act {
	case "pause":
		res, err = c.b.PauseTable(ctx, table)
	case "resume":
		skip := r.PostFormValue("skip") == "true"
		if skip && !confirmed {
			c.confirm(w, sess, table, act, "Resuming past the bad record skips it: it will be in neither the table nor its dead letters.",
				[]formField{{"skip", "true"}})
			return
		}
		res, err = c.b.ResumeTable(ctx, table, skip)
	case "rewind":
		req, ferr := rewindForm(table, r)
		if ferr != nil {
			c.refuse(w, r, http.StatusBadRequest, ferr)
			return
		}
		if !confirmed {
			c.confirm(w, sess, table, act, rewindWarning(req), []formField{
				{"to", r.PostFormValue("to")}, {"timestamp", r.PostFormValue("timestamp")}, {"policy", req.Policy}})
			return
		}
		res, err = c.b.RewindTable(ctx, req)
	case "maintain":
		res, err = c.b.Maintain(ctx, table, false)
	default:
		c.render(w, http.StatusNotFound, "message", &messageView{page: c.page("Not found", sess), Message: "No action " + act + ".", Back: tableLink(table)})
		return
	}
	c.done(w, r, sess, table, act, res, err)
}

// done answers a command: its result, or its error with the status the API
// would have answered.
func (c *console) done(w http.ResponseWriter, r *http.Request, sess consoleSession, table, act string, res any, err error) {
	if err != nil {
		code := runtime.HTTPStatusFromCode(grpcstatus.Code(apiError(err)))
		c.s.log.Warn("console command failed", "action", act, "table", table, "by", sess.who, "err", err)
		c.render(w, code, "message", &messageView{page: c.page(act+" "+table, sess), Message: act + " of " + table + " failed: " + err.Error(), Back: tableLink(table)})
		return
	}
	c.render(w, http.StatusOK, "message", &messageView{page: c.page(act+" "+table, sess), Message: act + " of " + table + " done.", Detail: resultText(res), Back: tableLink(table)})
}

func (c *console) confirm(w http.ResponseWriter, sess consoleSession, table, act, warning string, fields []formField) {
	c.render(w, http.StatusOK, "confirm", &confirmView{page: c.page("Confirm "+act+" of "+table, sess), Table: table, Action: act, Warning: warning, Fields: fields})
}

// errConsoleForm: a console form's field is not understood.
var errConsoleForm = errors.New("invalid form")

// rewindForm reads the table page's rewind form: to (earliest, latest or
// timestamp), timestamp (RFC 3339, or the browser's datetime-local form
// read as UTC) and policy (append or replace).
func rewindForm(table string, r *http.Request) (RewindRequest, error) {
	req := RewindRequest{Table: table, Policy: r.PostFormValue("policy")}
	switch req.Policy {
	case ReplayAppend, ReplayReplace:
	case "":
		req.Policy = ReplayAppend
	default:
		return req, fmt.Errorf("%w: policy %q: use append or replace", errConsoleForm, req.Policy)
	}
	switch to := r.PostFormValue("to"); to {
	case "earliest":
		req.Earliest = true
	case "latest":
		req.Latest = true
	case "timestamp":
		ts := r.PostFormValue("timestamp")
		t, err := time.Parse(time.RFC3339, ts)
		if err != nil {
			if t, err = time.ParseInLocation("2006-01-02T15:04", ts, time.UTC); err != nil {
				return req, fmt.Errorf("%w: timestamp %q: use 2006-01-02T15:04 (UTC) or RFC 3339", errConsoleForm, ts)
			}
		}
		req.Timestamp = t
	default:
		return req, fmt.Errorf("%w: to %q: use earliest, latest or timestamp", errConsoleForm, to)
	}
	return req, nil
}

func rewindWarning(req RewindRequest) string {
	where := "the earliest offsets Kafka still has"
	switch {
	case req.Latest:
		where = "the latest offsets (records not yet committed are skipped)"
	case !req.Timestamp.IsZero():
		where = "the first offsets at or after " + req.Timestamp.UTC().Format(time.RFC3339)
	}
	if req.Policy == ReplayReplace {
		return "Every partition of " + req.Table + " moves to " + where + ", and the table's rows from there on are deleted before they are read again."
	}
	return "Every partition of " + req.Table + " moves to " + where + ", and the records from there on are appended again (rows already in the table stay, so they may appear twice)."
}

func tableLink(table string) string { return "/ui/tables/" + url.PathEscape(table) }
