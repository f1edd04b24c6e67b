package forge

import "fmt"

// gitlabDialect is how GitLab's API v4 answers the world of
// testdata/api/README.md (the project's path escaped as one segment), and
// how its calls look.
func gitlabDialect() dialect {
	const project = "/api/v4/projects/octocat%2FHello-World"
	return dialect{
		typ:        GitLab,
		authHeader: "PRIVATE-TOKEN",
		authValue:  testToken,
		routes: []route{
			{method: "POST", path: project + "/statuses/" + headSHA, status: 201, file: "gitlab/status.json"},
			{method: "GET", path: "/api/v4/user", file: "gitlab/user.json"},
			{method: "GET", path: project + "/merge_requests/1347/notes", query: query("page", "2"), file: "gitlab/notes_1347_page2.json"},
			{method: "GET", path: project + "/merge_requests/1347/notes", file: "gitlab/notes_1347_page1.json",
				header: map[string]string{"X-Page": "1", "X-Next-Page": "2", "X-Per-Page": "100", "X-Total-Pages": "2"}},
			{method: "GET", path: project + "/merge_requests/1348/notes", file: "gitlab/notes_1348.json"},
			{method: "POST", path: project + "/merge_requests/1348/notes", status: 201, file: "gitlab/note_2001.json"},
			{method: "PUT", path: project + "/merge_requests/1348/notes/2001", file: "gitlab/note_2001.json"},
			{method: "PUT", path: project + "/merge_requests/1347/notes/1003", file: "gitlab/note_1003.json"},
			{method: "PUT", path: project + "/merge_requests/1347/notes/999", status: 404, file: "gitlab/not_found.json"},
			{method: "GET", path: project + "/merge_requests", query: query("state", "opened"), file: "gitlab/merge_requests_opened.json"},
			{method: "GET", path: project + "/merge_requests", query: query("state", "merged", "updated_after", "2026-05-01T00:00:00Z", "order_by", "updated_at", "sort", "desc"),
				file: "gitlab/merge_requests_merged.json"},
			{method: "GET", path: "/api/v4/users", query: query("username", "octocat"), file: "gitlab/users_octocat.json"},
			{method: "GET", path: "/api/v4/users", query: query("username", "mona"), file: "gitlab/users_mona.json"},
			{method: "GET", path: "/api/v4/users", query: query("username", "stranger"), file: "gitlab/users_stranger.json"},
			{method: "GET", path: project + "/members/all/1", file: "gitlab/member_octocat.json"},
			{method: "GET", path: project + "/members/all/2", file: "gitlab/member_mona.json"},
			{method: "GET", path: project + "/members/all/3", status: 404, file: "gitlab/not_found.json"},
		},
		status:       "POST " + project + "/statuses/" + headSHA,
		contextField: "name",
		states:       map[State]string{StatePending: "pending", StateSuccess: "success", StateFailure: "failed", StateSuperseded: "canceled"},
		selfCall:     "GET /api/v4/user",
		listComments: func(n int) string { return fmt.Sprintf("GET %s/merge_requests/%d/notes", project, n) },
		createComment: func(n int) string {
			return fmt.Sprintf("POST %s/merge_requests/%d/notes", project, n)
		},
		editComment: func(n int, id int64) string { return fmt.Sprintf("PUT %s/merge_requests/%d/notes/%d", project, n, id) },
	}
}
