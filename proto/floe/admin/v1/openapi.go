package adminv1

import _ "embed"

// OpenAPI is the HTTP/JSON form of the admin API as an OpenAPI (Swagger 2.0)
// document, generated from admin.proto and admin_http.yaml by `make proto`.
//
//go:embed admin.swagger.json
var OpenAPI []byte
