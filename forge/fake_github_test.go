package forge

import "fmt"

// githubDialect is how GitHub's API (under /api/v3/, as a GitHub
// Enterprise Server at the fake's address serves it) answers the world of
// testdata/api/README.md, and how its calls look.
func githubDialect() dialect {
	const repo = "/api/v3/repos/octocat/Hello-World"
	return dialect{
		typ:        GitHub,
		authHeader: "Authorization",
		authValue:  "Bearer " + testToken,
		routes: []route{
			{method: "POST", path: repo + "/statuses/" + headSHA, status: 201, file: "github/status.json"},
			{method: "GET", path: "/api/v3/user", file: "github/user.json"},
			{method: "GET", path: repo + "/issues/1347/comments", query: query("page", "2"), file: "github/comments_1347_page2.json"},
			{method: "GET", path: repo + "/issues/1347/comments", file: "github/comments_1347_page1.json",
				header: nextPage(repo + "/issues/1347/comments?page=2&per_page=100")},
			{method: "GET", path: repo + "/issues/1348/comments", file: "github/comments_1348.json"},
			{method: "POST", path: repo + "/issues/1348/comments", status: 201, file: "github/comment_2001.json"},
			{method: "PATCH", path: repo + "/issues/comments/2001", file: "github/comment_2001.json"},
			{method: "PATCH", path: repo + "/issues/comments/1003", file: "github/comment_1003.json"},
			{method: "PATCH", path: repo + "/issues/comments/999", status: 404, file: "github/not_found.json"},
			{method: "GET", path: repo + "/pulls", query: query("state", "open"), file: "github/pulls_open.json"},
			// The first page of closed pull requests reaches one updated
			// before the poll's time: its next page has no route.
			{method: "GET", path: repo + "/pulls", query: query("state", "closed", "sort", "updated", "direction", "desc"), file: "github/pulls_closed.json",
				header: nextPage(repo + "/pulls?direction=desc&page=2&per_page=100&sort=updated&state=closed")},
			{method: "GET", path: repo + "/pulls/1346", file: "github/pull_1346.json"},
			{method: "GET", path: repo + "/pulls/1341", file: "github/pull_1341.json"},
			{method: "GET", path: repo + "/collaborators/octocat/permission", file: "github/permission_octocat.json"},
			{method: "GET", path: repo + "/collaborators/mona/permission", file: "github/permission_mona.json"},
			{method: "GET", path: repo + "/collaborators/stranger/permission", file: "github/permission_stranger.json"},
		},
		status:       "POST " + repo + "/statuses/" + headSHA,
		contextField: "context",
		states:       map[State]string{StatePending: "pending", StateSuccess: "success", StateFailure: "failure", StateSuperseded: "error"},
		selfCall:     "GET /api/v3/user",
		listComments: func(n int) string { return fmt.Sprintf("GET %s/issues/%d/comments", repo, n) },
		createComment: func(n int) string {
			return fmt.Sprintf("POST %s/issues/%d/comments", repo, n)
		},
		editComment: func(_ int, id int64) string { return fmt.Sprintf("PATCH %s/issues/comments/%d", repo, id) },
	}
}
